import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min, ValidateNested } from 'class-validator';
import { PAID_PLANS, PLAN_IDS, type PaidPlanId, type PlanId } from '../plans.js';

const MAX_LIMIT = Number.MAX_SAFE_INTEGER;

export class PlanLimitsDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Documents uploaded per billing period; null: no limit',
    example: 10000,
  })
  documents: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Authenticated requests per billing period',
    example: 1000000,
  })
  api_calls: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Bytes stored at any time', example: 10737418240 })
  storage_bytes: number | null;
}

export class BillingPlanDto {
  @ApiProperty({ enum: PLAN_IDS, example: 'team' }) plan: PlanId;
  @ApiProperty({ example: 'Team' }) name: string;
  @ApiProperty({ type: 'integer', description: 'Requests per minute (rate limit)', example: 300 }) rpm: number;
  @ApiProperty({ type: PlanLimitsDto }) limits: PlanLimitsDto;
  @ApiProperty({
    example: 'active',
    description: "Stripe subscription status (active, past_due, canceled, ...) or 'none'",
  })
  subscription_status: string;
  @ApiProperty({
    format: 'date-time',
    description: 'End of the current billing period',
    example: '2026-04-01T00:00:00.000Z',
  })
  current_period_end: string;
  @ApiProperty({ description: 'The subscription ends (back to Free) at the end of the period', example: false })
  cancel_at_period_end: boolean;
}

export class UsagePeriodDto {
  @ApiProperty({
    format: 'date-time',
    description: 'Start of the billing period (included)',
    example: '2026-03-01T00:00:00.000Z',
  })
  start: string;
  @ApiProperty({
    format: 'date-time',
    description: 'End of the billing period (excluded)',
    example: '2026-04-01T00:00:00.000Z',
  })
  end: string;
}

export class BillingUsageDto {
  @ApiProperty({ type: UsagePeriodDto }) period: UsagePeriodDto;
  @ApiProperty({ type: 'integer', example: 412 }) documents_uploaded: number;
  @ApiProperty({ type: 'integer', nullable: true, example: 10000 }) documents_limit: number | null;
  @ApiProperty({ type: 'integer', example: 18233 }) api_calls: number;
  @ApiProperty({ type: 'integer', nullable: true, example: 1000000 }) api_calls_limit: number | null;
  @ApiProperty({ type: 'integer', description: 'Bytes stored now', example: 73400320 }) storage_bytes: number;
  @ApiProperty({ type: 'integer', nullable: true, example: 10737418240 }) storage_limit_bytes: number | null;
}

export class CheckoutDto {
  @ApiProperty({ enum: PAID_PLANS, example: 'team' })
  @IsIn(PAID_PLANS as unknown as string[])
  plan: PaidPlanId;
}

export class UrlDto {
  @ApiProperty({ format: 'uri', example: 'https://checkout.stripe.com/c/pay/cs_test_a1B2c3D4e5F6' }) url: string;
}

export class CustomLimitsDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: 'Documents per billing period; absent: no limit',
    example: 500000,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_LIMIT)
  documents?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: 'API calls per billing period; absent: no limit',
    example: 50000000,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_LIMIT)
  api_calls?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: 'Bytes stored; absent: no limit',
    example: 1099511627776,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_LIMIT)
  storage_bytes?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 1_000_000,
    description: "Sets the tenant's rate_limit_rpm",
    example: 5000,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  rpm?: number;
}

/** The plan part of PATCH /admin/tenants/:tenantId (managed deployment). */
export interface TenantPlanInput {
  plan?: PlanId;
  limits?: CustomLimitsDto;
}

export class TenantPlanFieldsDto {
  @ApiPropertyOptional({ enum: PLAN_IDS, description: "Managed deployment: the tenant's plan", example: 'enterprise' })
  @IsOptional()
  @IsIn(PLAN_IDS as unknown as string[])
  plan?: PlanId;

  @ApiPropertyOptional({
    type: CustomLimitsDto,
    description: "Managed deployment, Enterprise only: the tenant's own limits",
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => CustomLimitsDto)
  limits?: CustomLimitsDto;
}

export class PlanPriceDto {
  @ApiProperty({
    type: 'integer',
    description: "The amount per period in the currency's smallest unit (cents), as Stripe gives it",
    example: 9900,
  })
  unit_amount: number;
  @ApiProperty({ description: 'ISO 4217 currency code', example: 'EUR' }) currency: string;
  @ApiProperty({ enum: ['day', 'week', 'month', 'year'], example: 'month' }) interval:
    'day' | 'week' | 'month' | 'year';
  @ApiProperty({ type: 'integer', description: 'Periods between charges', example: 1 }) interval_count: number;
}

export class PlanOfferDto {
  @ApiProperty({ enum: PLAN_IDS, example: 'team' }) id: PlanId;
  @ApiProperty({ example: 'Team' }) name: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Requests per minute; null: agreed per organization',
    example: 300,
  })
  rpm: number | null;
  @ApiProperty({ type: PlanLimitsDto }) limits: PlanLimitsDto;
  @ApiProperty({ description: 'Can be bought through Stripe Checkout', example: true }) self_service: boolean;
  @ApiProperty({ description: 'Limits agreed per organization with the operator', example: false }) custom: boolean;
  @ApiProperty({
    type: PlanPriceDto,
    nullable: true,
    description:
      "A paid plan's price: the configured Stripe price, or the operator's PLAN_PRICES_DISPLAY where Stripe is not " +
      'configured; null for Free, Enterprise, or a price that is not known',
  })
  price: PlanPriceDto | null;
}

export class PlanCatalogDto {
  @ApiProperty({ type: [PlanOfferDto], description: 'From the smallest plan to the largest' })
  data: PlanOfferDto[];
}
