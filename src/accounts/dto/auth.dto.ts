import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { SLUG_PATTERN } from '../../admin/dto/tenant.dto.js';
import { EX } from '../../openapi/examples.js';

export class RegisterDto {
  @ApiProperty({ example: 'owner@acme.example', maxLength: 254 })
  @IsEmail()
  @MaxLength(254)
  email: string;

  @ApiProperty({
    minLength: 10,
    maxLength: 256,
    description: '10 to 256 characters, not a common password',
    example: 'correct horse battery staple',
  })
  @IsString()
  @MaxLength(1024)
  password: string;

  @ApiPropertyOptional({ example: 'Ada Lovelace', maxLength: 200, description: "The owner's name, shown to the team" })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiProperty({ example: 'Acme GmbH', description: 'The organization (tenant) name' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  organization: string;

  @ApiProperty({ example: 'acme', pattern: SLUG_PATTERN.source })
  @IsString()
  @Matches(SLUG_PATTERN, { message: 'slug must be lowercase letters, digits and inner hyphens (1-63 characters)' })
  slug: string;
}

export class RegisteredUserDto {
  @ApiProperty({ format: 'uuid', example: EX.userId }) id: string;
  @ApiProperty({ example: 'owner@acme.example' }) email: string;
  @ApiProperty({ enum: ['owner', 'admin', 'member'], example: 'owner' }) role: 'owner' | 'admin' | 'member';
}

export class OrganizationRefDto {
  @ApiProperty({ format: 'uuid', example: EX.tenantId }) id: string;
  @ApiProperty({ example: 'Acme GmbH' }) name: string;
  @ApiProperty({ example: 'acme' }) slug: string;
}

export class RegisteredDto {
  @ApiProperty({ type: RegisteredUserDto }) user: RegisteredUserDto;
  @ApiProperty({ type: OrganizationRefDto }) organization: OrganizationRefDto;
}

/** What a sign-up answers: the same whether or not the address already has an account. */
export class RegistrationAcceptedDto {
  @ApiProperty({
    example: 'owner@acme.example',
    description: 'The address (in lower case) that a mail is on its way to',
  })
  email: string;
}

export class LoginDto {
  @ApiProperty({ example: 'owner@acme.example' })
  @IsString()
  @MaxLength(254)
  email: string;

  @ApiProperty({ example: 'correct horse battery staple' })
  @IsString()
  @MaxLength(1024)
  password: string;
}

export class TokenPairDto {
  @ApiProperty({
    description: 'HS256 tenant JWT with tenant_id, sub (user id), sid, role, iat, exp',
    example: EX.accessToken,
  })
  access_token: string;
  @ApiProperty({ description: 'Single-use; each refresh returns a new one', example: EX.opaqueToken })
  refresh_token: string;
  @ApiProperty({ example: 900, description: 'Seconds the access token lives' }) expires_in: number;
  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' }) token_type: 'Bearer';
}

export class TotpRequiredDto {
  @ApiProperty({ enum: [true], example: true }) totp_required: true;
  @ApiProperty({
    description: 'Single use, valid 5 minutes; send it with the code to /v1/auth/totp/validate',
    example: EX.opaqueToken,
  })
  session_token: string;
}

export class RefreshDto {
  @ApiProperty({ example: EX.opaqueToken })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  refresh_token: string;
}

/** The cookie session's first call, right after sign-in: the refresh token moves into the cookie. */
export class SessionRefreshDto {
  @ApiPropertyOptional({
    description:
      'Only on the first call after a sign-in, to move the refresh token into the cookie; afterwards the cookie alone',
    example: EX.opaqueToken,
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  refresh_token?: string;
}

/** What the cookie session answers: an access token; the refresh token stays in its cookie. */
export class SessionTokenDto {
  @ApiProperty({ description: 'HS256 tenant JWT, as from /v1/auth/login', example: EX.accessToken })
  access_token: string;
  @ApiProperty({ example: 900, description: 'Seconds the access token lives' }) expires_in: number;
  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' }) token_type: 'Bearer';
}

export class ForgotPasswordDto {
  @ApiProperty({ example: 'owner@acme.example' })
  @IsString()
  @MinLength(1)
  @MaxLength(320)
  email: string;
}

export class ResetPasswordDto {
  @ApiProperty({ description: 'The token from the link in the mail', example: EX.opaqueToken })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  token: string;

  @ApiProperty({
    description: '10 to 256 characters, not a common password',
    example: 'plaid lantern orbit seventy',
  })
  @IsString()
  @MaxLength(1024)
  password: string;
}

export class MailTokenDto {
  @ApiProperty({ description: 'The token from the link in the mail', example: EX.opaqueToken })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  token: string;
}

export class EmailVerifiedDto {
  @ApiProperty({ enum: [true], example: true }) email_verified: true;
}

export class SessionDto {
  @ApiProperty({ format: 'uuid', example: EX.sessionId }) id: string;
  @ApiProperty({ example: 'Firefox on Windows', description: 'A short label made from the user agent' })
  device: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'Mozilla/5.0 (Windows NT 10.0; rv:132.0) Firefox/132.0' })
  user_agent: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: '203.0.113.7' }) ip_address: string | null;
  @ApiProperty({
    format: 'date-time',
    example: EX.createdAt,
    description: 'Its last sign-in or renewal (the web front end renews an open page every few minutes)',
  })
  last_used_at: string;
  @ApiProperty({
    format: 'date-time',
    example: EX.createdAt,
    description: 'The sign-in it began with; renewals keep it',
  })
  first_used_at: string;
  @ApiProperty({ format: 'date-time', example: EX.createdAt, description: 'When it ends even if renewed' })
  expires_at: string;
  @ApiProperty({ example: true, description: 'The session of this request' }) current: boolean;
}

export class SessionListDto {
  @ApiProperty({ type: [SessionDto] }) data: SessionDto[];
}
