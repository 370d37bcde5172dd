/**
 * @module The benchmark's progress lines, on stderr (stdout carries the tables).
 */
export const progress = (line: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
