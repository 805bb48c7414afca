import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsIn,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { EVENT_NAMES, type EventName } from '../../events/events.js';
import { EX } from '../../openapi/examples.js';
import type { Webhook } from '../entities/webhook.entity.js';

export const WEBHOOK_URL_MAX_LENGTH = 2048;

export class CreateWebhookDto {
  @ApiProperty({ example: 'https://erp.example.com/sdf-events', description: 'http or https only' })
  @IsString()
  @MinLength(1)
  @MaxLength(WEBHOOK_URL_MAX_LENGTH)
  url: string;

  @ApiProperty({
    minLength: 16,
    maxLength: 512,
    writeOnly: true,
    description: 'HMAC key for X-SDF-Signature. Stored encrypted; never returned.',
    example: 'whsec-4f9c2b7e1a8d6035e2c9',
  })
  @IsString()
  @MinLength(16)
  @MaxLength(512)
  secret: string;

  @ApiProperty({
    enum: EVENT_NAMES,
    isArray: true,
    example: ['document.validated', 'document.signed'],
    description:
      "The events to deliver: the specification's four, and the service's own document.signing_failed and " +
      'document.erp_pushed, which go only to a webhook that names them',
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(EVENT_NAMES.length)
  @ArrayUnique()
  @IsIn(EVENT_NAMES, { each: true, message: `each event must be one of ${EVENT_NAMES.join(', ')}` })
  events: EventName[];
}

export class WebhookDto {
  @ApiProperty({ format: 'uuid', example: EX.webhookId }) id: string;
  @ApiProperty({ format: 'uuid', example: EX.tenantId }) tenant_id: string;
  @ApiProperty({ example: 'https://erp.example.com/sdf-events' }) url: string;
  @ApiProperty({ enum: EVENT_NAMES, isArray: true, example: ['document.validated', 'document.signed'] })
  events: EventName[];
  @ApiProperty({ example: true }) is_active: boolean;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;

  /** Neither the secret nor its hash ever leaves the server. */
  static from(w: Webhook): WebhookDto {
    return {
      id: w.id,
      tenant_id: w.tenant_id,
      url: w.url,
      events: [...w.events],
      is_active: w.is_active,
      created_at: w.created_at.toISOString(),
    };
  }
}

export class WebhookListDto {
  @ApiProperty({ type: [WebhookDto] }) webhooks: WebhookDto[];
}
