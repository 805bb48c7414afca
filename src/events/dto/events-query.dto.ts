import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, Matches } from 'class-validator';
import { EVENT_NAMES } from '../events.js';

const NAME = `(?:${EVENT_NAMES.map((n) => n.replace('.', '\\.')).join('|')})`;
/** One or more event names, comma-separated, each one the service emits. */
export const EVENT_TYPES = new RegExp(`^${NAME}(?:,${NAME})*$`);
/** An event id as the stream gives it (a positive whole number, at most 18 digits). */
export const EVENT_ID = /^\d{1,18}$/;

/** GET /events query: which events, of which document, and where to resume. */
export class EventsQueryDto {
  @ApiPropertyOptional({
    description: `Only these event types, comma-separated (${EVENT_NAMES.join(', ')}); default: all`,
    example: 'document.validated,document.signed',
  })
  @IsOptional()
  @IsString()
  @Matches(EVENT_TYPES, { message: `$property must be a comma-separated list of: ${EVENT_NAMES.join(', ')}` })
  types?: string;

  @ApiPropertyOptional({ format: 'uuid', description: "Only this document's events (its record id)" })
  @IsOptional()
  @IsUUID('all', { message: '$property must be a UUID (a document id)' })
  document?: string;

  @ApiPropertyOptional({
    description: 'Resume after this event id, for a client that cannot send the Last-Event-ID header (the header wins)',
    example: '1042',
  })
  @IsOptional()
  @IsString()
  @Matches(EVENT_ID, { message: '$property must be an event id (a whole number)' })
  last_event_id?: string;
}
