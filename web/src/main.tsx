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
      // A refused request (bad key, missing document) will not change by asking again.
      retry: (count, error) => count < 2 && !(error instanceof ApiProblem && error.status < 500),
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
