export interface ImportEdge {
  from: string;
  to: string;
}
export interface Port {
  name: string;
  file: string;
  purpose: string;
  implementations: string[];
}
export const LAYERS: { name: string; areas: string[] }[];
export const ALLOWED: ImportEdge[];
export const PORTS: Port[];
export const BEGIN: string;
export const END: string;
export const DOC: string;
export function areaOf(file: string): string;
export function fileImports(root?: string): ImportEdge[];
export function violations(edges?: ImportEdge[]): string[];
export function areaGraph(edges?: ImportEdge[]): Map<string, Set<string>>;
export function renderGraph(edges?: ImportEdge[]): string;
export function updatedArchitectureDoc(text: string, edges?: ImportEdge[]): Promise<string>;
