/**
 * A refused spec item's error is "status-free": it is in the logs and the pass
 * summary (what the handler returns and logs), not only in a status write that may fail. Every
 * invalid item, not only the oversized ones: one whose status cannot be written (DynamoDB
 * answering 500, as for an item at the size limit) or one without a usable key (no status at all)
 * still says why in the summary. Bounded: the first 50 items are named, the rest counted.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { aSpecItem, runtimeWith, statusWritesFailing, useSimHarness } from './support';

describe('an invalid spec item, in the pass summary and the logs', () => {
  const h = useSimHarness();

  it('names the item and its error when its status cannot be written, and for an item without a usable key; the other services are reconciled', async () => {
    // Prepare: a bad desiredCount, an item whose key is unusable, a good spec; status writes fail.
    await h.putSpec(aSpecItem({ service: 'bad', desiredCount: -1 }));
    await h.doc.send(new PutCommand({ TableName: h.runtime.config.specsTable, Item: { ...aSpecItem({ service: 'x' }), cluster: 'no such/cluster' } }));
    await h.putSpec(aSpecItem({ service: 'web' }));
    const { doc } = statusWritesFailing(h);

    // Act
    const s = await runtimeWith(h, { doc }).run({ holder: 'invalid' });

    // Assess: the summary and the log name both items and why; no status was written; web created.
    expect(s.counts.invalid).toBe(2);
    expect(s.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^spec apps\/bad: desiredCount: .*0/)]));
    expect(s.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^spec .*cluster: /)]));
    const warned = h.log.lines.filter((e) => e.level === 'warn' && /spec item invalid/.test(e.message));
    expect(warned.map((e) => e.fields.serviceName)).toEqual(expect.arrayContaining(['apps/bad']));
    expect(warned).toHaveLength(2);
    expect(s.counts.statusesWritten).toBe(0);
    expect(await h.status({ cluster: 'apps', service: 'bad' })).toBeUndefined();
    expect(h.sim.calls({ action: 'CreateService' }).map((c) => c.request.serviceName)).toEqual(['web']);
    doc.destroy();
  });

  it('names at most 50 items and counts the rest', async () => {
    // Prepare: 60 invalid items.
    for (let i = 0; i < 60; i++) await h.putSpec(aSpecItem({ service: `bad-${String(i).padStart(2, '0')}`, desiredCount: -1 }));

    // Act
    const s = await h.pass('many-invalid');

    // Assess
    expect(s.counts.invalid).toBe(60);
    expect(s.errors.filter((e) => e.startsWith('spec apps/bad-'))).toHaveLength(50);
    expect(s.errors).toContain("specs: 10 more invalid spec items (counts.invalid is 60; each one's status says why)");
  });
});
