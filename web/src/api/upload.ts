/**
 * A `fetch` for openapi-fetch that sends with XMLHttpRequest, the one browser API that reports upload
 * progress; the request itself is still built by the generated client, so its path and types hold.
 */
export function fetchWithUploadProgress(onProgress: (sent: number, total: number) => void): typeof fetch {
  return (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    return request.arrayBuffer().then(
      (body) =>
        new Promise<Response>((resolve, reject) => {
          const xhr = new XMLHttpRequest();
          xhr.open(request.method, request.url);
          request.headers.forEach((value, name) => xhr.setRequestHeader(name, value));
          xhr.responseType = 'arraybuffer';
          xhr.upload.onprogress = (event) =>
            onProgress(event.loaded, event.lengthComputable ? event.total : body.byteLength);
          xhr.onload = () => {
            const headers = new Headers();
            for (const line of xhr
              .getAllResponseHeaders()
              .trim()
              .split(/[\r\n]+/)) {
              const at = line.indexOf(':');
              if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
            }
            resolve(
              new Response(xhr.status === 204 ? null : (xhr.response as ArrayBuffer), { status: xhr.status, headers }),
            );
          };
          xhr.onerror = () => reject(new TypeError('network error'));
          xhr.onabort = () => reject(new DOMException('aborted', 'AbortError'));
          request.signal.addEventListener('abort', () => xhr.abort());
          xhr.send(body);
        }),
    );
  };
}
