/** Types of scripts/build-cli.mjs (plain JavaScript, so that bin/ecsr.js runs it without tsx). */
export declare const ROOT: string;
export declare const DIST: string;
export declare const CLI_ENTRY: string;
/** esbuild's metafile of the last build. */
export declare const METAFILE: string;
/** Whether dist/ is missing or older than one of the project's sources it was built from. */
export declare function isStale(dist?: string, root?: string): boolean;
/** Builds dist/; resolves with the build's real time in milliseconds. */
export declare function buildCli(): Promise<number>;
