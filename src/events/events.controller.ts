import { applyDecorators, Controller, Get, Injectable, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { TenantAuth } from '../auth/auth-context.js';
import { Tenant, TenantEndpoint } from '../auth/decorators.js';
import { AppError } from '../common/errors.js';
import { ApiError, ERRORS } from '../openapi/decorators.js';
import { EVENT_ID, EventsQueryDto } from './dto/events-query.dto.js';
import { EventStream, type StreamFilter } from './event-stream.js';
import type { EventName } from './events.js';

const DESCRIPTION =
  "The tenant's document events as Server-Sent Events (`text/event-stream`), the same events and JSON bodies " +
  'as the webhooks: each event has `id` (increasing), `event` (its type) and `data` (the webhook body). ' +
  'Send `Last-Event-ID` (or `last_event_id`) with the last id you read to resume exactly after it; an id ' +
  'older than the retention window gets a `stream.restarted` event saying where the stream restarts. A ' +
  '`: heartbeat` comment comes every EVENTS_HEARTBEAT_MS (15 s). Opening a stream counts as one request; ' +
  'the events on it count as none. At most EVENTS_MAX_PER_TENANT streams per tenant (20) on one server; a ' +
  'client that stops reading is cut and resumes with its last id.';

const STREAM_EXAMPLE =
  'retry: 2000\n\nid: 1042\nevent: document.validated\ndata: {"id":"…","event":"document.validated",…}\n\n: heartbeat\n\n';

const TOO_MANY_STREAMS = {
  name: 'too_many_streams',
  code: 'RATE_LIMITED',
  message: 'At most 20 event streams may be open at once for this tenant; close one first',
  details: [{ path: '/connections', message: 'must be at most 20 per tenant' }],
};

const BAD_LAST_EVENT_ID = {
  name: 'bad_last_event_id',
  code: 'VALIDATION_ERROR',
  message: 'Malformed Last-Event-ID',
  details: [{ path: '/headers/last-event-id', message: 'must be an event id (a whole number)' }],
};

/** Reads the query and the Last-Event-ID header into a filter and a resume point; 400 naming the field. */
function parse(query: EventsQueryDto, req: Request): { filter: StreamFilter; after: number | null } {
  const header = req.get('last-event-id');
  let after: number | null = null;
  if (header !== undefined && header.trim() !== '') {
    if (!EVENT_ID.test(header.trim())) throw AppError.badRequest(BAD_LAST_EVENT_ID.message, BAD_LAST_EVENT_ID.details);
    after = Number(header.trim());
  } else if (query.last_event_id !== undefined) {
    after = Number(query.last_event_id);
  }
  const types = query.types ? new Set(query.types.split(',') as EventName[]) : null;
  return { filter: { types, document: query.document?.toLowerCase() ?? null }, after };
}

const Stream = () =>
  applyDecorators(
    ApiOperation({ summary: "Follow the tenant's document events (Server-Sent Events)", description: DESCRIPTION }),
    ApiHeader({
      name: 'Last-Event-ID',
      required: false,
      description: 'The id of the last event read: the stream resumes exactly after it',
      schema: { type: 'string', pattern: '^\\d{1,18}$' },
    }),
    ApiResponse({
      status: 200,
      description: 'The stream: events as they are committed, heartbeats between them',
      content: { 'text/event-stream': { schema: { type: 'string' }, example: STREAM_EXAMPLE } },
    }),
    ApiError(
      400,
      'An unknown event type, a malformed document id or Last-Event-ID',
      ERRORS.invalidQuery,
      BAD_LAST_EVENT_ID,
    ),
    ApiError(
      429,
      "Past the tenant's or the server's bound of open streams (RATE_LIMITED), past the rate limit or a quota",
      TOO_MANY_STREAMS,
      ERRORS.rateLimited,
    ),
  );

/**
 * The stream's one handler, for both addresses below: the class decorators (tags, authentication, path)
 * stay on the controllers, so each is declared once in the OpenAPI document.
 */
@Injectable()
abstract class EventStreamEndpoint {
  constructor(private readonly stream: EventStream) {}

  @Get()
  @Stream()
  async events(
    @Tenant() auth: TenantAuth,
    @Query() query: EventsQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const { filter, after } = parse(query, req);
    await this.stream.attach(auth.tenantId, filter, res, after);
  }
}

/** GET /events: the tenant's event stream. */
@ApiTags('events')
@TenantEndpoint()
@Controller('events')
export class EventsController extends EventStreamEndpoint {}

/** GET /v1/events: the same stream under the managed deployment's prefix (the portal's pages follow it). */
@ApiTags('events')
@TenantEndpoint()
@Controller('v1/events')
export class EventsV1Controller extends EventStreamEndpoint {}
