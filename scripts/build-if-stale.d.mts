export const STAMP: string;
export function buildInputs(root: string): string[];
export function newestMtime(path: string): number;
export function staleReason(root: string, inputs?: string[]): string | null;
export function writeStamp(root: string): void;
