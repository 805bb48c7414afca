import { hashKey, useQueryClient, type Query, type QueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';
import { api } from './api/client.js';
import { LiveStream, staleQueries, type LiveStatus, type SseMessage } from './live.js';
import { useSession, type SessionCredential } from './session.js';

/** The client's GET, loosened for the stream, whose answer is read as it arrives rather than parsed. */
type StreamGet = (
  path: string,
  init: { parseAs: 'stream'; signal: AbortSignal; headers: Record<string, string> },
) => Promise<{ response: Response }>;

/** Opens `GET /events` through the one API client (its credential), resuming after `lastEventId`. */
function openEvents(lastEventId: string | undefined, signal: AbortSignal): Promise<Response> {
  const get = api.GET as unknown as StreamGet;
  const headers: Record<string, string> = { Accept: 'text/event-stream' };
  if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
  return get('/events', { parseAs: 'stream', signal, headers }).then((answer) => answer.response);
}

/**
 * Whose stream it is: the API key, or the account's session (its access token is renewed every few
 * minutes; the stream, authenticated when it opened, stays open across a renewal).
 */
function identityOf(credential: SessionCredential | null): string | null {
  if (!credential) return null;
  if (credential.kind === 'api-key') return `key:${credential.apiKey}`;
  try {
    const claims = JSON.parse(atob(credential.accessToken.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as {
      tenant_id?: string;
      sub?: string;
      sid?: string;
    };
    return `account:${claims.tenant_id}:${claims.sub}:${claims.sid}`;
  } catch {
    return `account:${credential.accessToken}`;
  }
}

/** How long the stream stays open after the last page that follows it is left (a navigation re-uses it). */
const LINGER_MS = 10_000;
/** Events that arrive together refresh each query once. */
const BATCH_MS = 200;

// One stream per tab, shared by every page that follows it.
let current: { identity: string; stream: LiveStream; queryClient: QueryClient } | null = null;
let followers = 0;
let linger: ReturnType<typeof setTimeout> | undefined;
let status: LiveStatus = 'connecting';
const listeners = new Set<() => void>();
let stale = new Map<string, readonly unknown[]>();
let batch: ReturnType<typeof setTimeout> | undefined;

function setStatus(next: LiveStatus): void {
  status = next;
  for (const listener of listeners) listener();
}

function refresh(queryClient: QueryClient, keys: (readonly unknown[])[]): void {
  for (const key of keys) stale.set(JSON.stringify(key), key);
  batch ??= setTimeout(() => {
    batch = undefined;
    const due = [...stale.values()];
    stale = new Map();
    for (const queryKey of due) void queryClient.invalidateQueries({ queryKey });
  }, BATCH_MS);
}

/** Queries a page waits on for an event that their data cannot show is coming (a signing under way), by hash. */
const awaited = new Map<string, number>();

/**
 * A fresh stream (not a resumption) carries only what happens from now on: a query read before it opened
 * that was waiting for a change (a document being checked or signed, a list showing one, an ERP push
 * under way) is read once more.
 */
function waitingBefore(openedAt: number) {
  return (query: Query) => {
    if (query.state.dataUpdatedAt >= openedAt) return false;
    if (awaited.has(query.queryHash)) return true;
    const [kind] = query.queryKey;
    const data = query.state.data as
      { status?: string; documents?: { status?: string }[]; pushes?: { status?: string }[] } | undefined;
    if (kind === 'document') return data?.status === 'pending';
    if (kind === 'documents') return data?.documents?.some((d) => d.status === 'pending') ?? false;
    if (kind === 'erp-status')
      return data?.pushes?.some((p) => p.status === 'queued' || p.status === 'running') ?? false;
    return false;
  };
}

/**
 * Marks a query as waiting for an event while `waiting` holds, for what its data does not say (a signing
 * asked for leaves the record as it was until it ends): a stream that opens afresh meanwhile has it read
 * once more, as it would a document still being checked.
 */
export function useAwaitedEvent(queryKey: readonly unknown[], waiting: boolean): void {
  const hash = hashKey(queryKey);
  useEffect(() => {
    if (!waiting) return;
    awaited.set(hash, (awaited.get(hash) ?? 0) + 1);
    return () => {
      const left = (awaited.get(hash) ?? 1) - 1;
      if (left > 0) awaited.set(hash, left);
      else awaited.delete(hash);
    };
  }, [hash, waiting]);
}

function start(identity: string, queryClient: QueryClient): void {
  if (current?.identity === identity && current.queryClient === queryClient) return;
  void current?.stream.stop();
  setStatus('connecting');
  const stream = new LiveStream({
    open: openEvents,
    onMessage: (message: SseMessage) => refresh(queryClient, staleQueries(message)),
    onStatus: (next, { resumed }) => {
      if (current?.stream !== stream) return;
      if (next === 'open' && !resumed) {
        void queryClient.invalidateQueries({ predicate: waitingBefore(Date.now()) });
      }
      setStatus(next);
    },
  });
  current = { identity, stream, queryClient };
  stream.start();
}

function follow(identity: string, queryClient: QueryClient): () => void {
  clearTimeout(linger);
  followers += 1;
  start(identity, queryClient);
  return () => {
    followers -= 1;
    if (followers > 0) return;
    linger = setTimeout(() => {
      if (followers > 0 || !current) return;
      void current.stream.stop();
      current = null;
      setStatus('connecting');
    }, LINGER_MS);
  };
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Follows the service's event stream while the calling page is shown (one stream per tab whatever the
 * number of pages and panels that call it), refreshing the queries its events make stale. Returns the
 * stream's state: a page polls only while it is not `open`.
 */
export function useLiveStatus(): LiveStatus {
  const queryClient = useQueryClient();
  const { credential } = useSession();
  const identity = identityOf(credential);
  useEffect(() => (identity ? follow(identity, queryClient) : undefined), [identity, queryClient]);
  return useSyncExternalStore(
    subscribe,
    () => (identity ? status : 'down'),
    () => 'down',
  );
}
