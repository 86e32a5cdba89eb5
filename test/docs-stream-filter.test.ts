/**
 * docs/fast-path.md quotes the stream mapping's filter the construct deploys: every reserved
 * partition (`RESERVED_PARTITIONS`). A breaker found the page once listing only the first three,
 * after the fan-out added `#heartbeat` and `#target`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESERVED_PARTITIONS } from '../lambda/adapters/dynamo-spec-store';

describe('docs/fast-path.md', () => {
  it('quotes the stream filter the construct deploys (every reserved partition)', () => {
    // Prepare
    const page = readFileSync(new URL('../docs/fast-path.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');

    // Act
    const quoted = /"anything-but": (\[[^\]]*\])/.exec(page)?.[1];

    // Assess
    expect(quoted && (JSON.parse(quoted) as string[]).sort()).toEqual([...RESERVED_PARTITIONS].sort());
  });
});
