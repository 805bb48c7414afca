import { describe, expect, it } from 'vitest';
import { actorFilter } from './audit-query.service.js';

describe('GET /v1/audit actor filter (M4)', () => {
  it('reads a user id, an API key prefix or a full actor string', () => {
    expect(actorFilter('3F2B8A4E-1C2D-4E5F-8A9B-0C1D2E3F4A5B')).toBe('user:3f2b8a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b');
    expect(actorFilter('sdf_kAb-')).toBe('api_key:sdf_kAb-');
    expect(actorFilter('api_key:sdf_kAbC')).toBe('api_key:sdf_kAbC');
    expect(actorFilter('admin:alice')).toBe('admin:alice');
    expect(actorFilter('erp-sync')).toBe('user:erp-sync');
  });
});
