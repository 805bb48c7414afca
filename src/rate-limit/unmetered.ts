import { SetMetadata } from '@nestjs/common';

export const UNMETERED = 'sdf:unmetered';

/**
 * A tenant route that is not counted as an API call nor refused by the API-call quota (the billing
 * routes: reading usage never spends it, and a tenant over quota can still upgrade). The rate limit
 * still applies.
 */
export const Unmetered = () => SetMetadata(UNMETERED, true);
