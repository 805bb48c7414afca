/**
 * The token of a mailed link, read once and taken out of the address bar and its history entry at
 * once, so it is neither left on screen nor sent on as a Referer.
 */
export function takeLinkToken(): string | null {
  const url = new URL(location.href);
  const token = url.searchParams.get('token');
  if (token !== null) {
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
  }
  return token;
}
