/** Offers bytes held in the page as a file download (a blob: URL, released once the browser took it). */
export function download(bytes: Uint8Array, name: string, type: string): void {
  downloadBlob(new Blob([bytes as BlobPart], { type }), name);
}

/** Offers a Blob as a file download. */
export function downloadBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
