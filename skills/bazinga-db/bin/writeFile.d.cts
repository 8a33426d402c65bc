/** Types of writeFile.cjs (plain JavaScript, used before anything is built). */
export declare function writeFileAtomically(file: string, data: string | Uint8Array, options?: { mode?: number; mtime?: Date | number; replaceLink?: boolean }): void;
