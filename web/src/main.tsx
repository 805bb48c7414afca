import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Router } from 'wouter';
import { App } from './app.js';
import { ApiProblem } from './api/client.js';
import { SessionProvider } from './session.js';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refused request (bad key, missing document) will not change by asking again; a rate limit or an
      // outage will, once its Retry-After has passed.
      retry: (count, error) => {
        if (!(error instanceof ApiProblem)) return count < 2;
        if (error.status === 429 || error.status === 503) return count < 3;
        return count < 2 && error.status >= 500;
      },
      retryDelay: (count, error) =>
        error instanceof ApiProblem && error.retryAfterSeconds !== null
          ? Math.min(error.retryAfterSeconds, 60) * 1000
          : Math.min(1000 * 2 ** count, 10_000),
      refetchOnWindowFocus: false,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <SessionProvider>
        <Router base="/app">
          <App />
        </Router>
      </SessionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
