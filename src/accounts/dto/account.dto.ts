import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import { EX } from '../../openapi/examples.js';
import type { Tenant } from '../../tenants/entities/tenant.entity.js';
import type { AccountToken } from '../entities/account-token.entity.js';
import type { User } from '../entities/user.entity.js';

export class OrganizationDto {
  @ApiProperty({ format: 'uuid', example: EX.tenantId }) id: string;
  @ApiProperty({ example: 'Acme GmbH' }) name: string;
  @ApiProperty({ example: 'acme' }) slug: string;
  @ApiProperty({ enum: ['free', 'developer', 'team', 'business', 'enterprise'], example: 'team' }) plan: string;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;

  static from(t: Tenant): OrganizationDto {
    return { id: t.id, name: t.name, slug: t.slug, plan: t.plan, created_at: t.created_at.toISOString() };
  }
}

export class UpdateOrganizationDto {
  @ApiProperty({ example: 'Acme AG' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;
}

/** A user as the portal shows it: never the password hash or the TOTP secret. */
export class MemberDto {
  @ApiProperty({ format: 'uuid', example: EX.userId }) id: string;
  @ApiProperty({ example: 'owner@acme.example' }) email: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'Ada Lovelace' }) name: string | null;
  @ApiProperty({ enum: ['owner', 'admin', 'member'], example: 'owner' }) role: string;
  @ApiProperty({ example: true }) email_verified: boolean;
  @ApiProperty({ example: false }) totp_enabled: boolean;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;

  static from(u: User): MemberDto {
    return {
      id: u.id,
      email: u.email,
      name: u.name,
      role: u.role,
      email_verified: u.email_verified,
      totp_enabled: u.totp_enabled,
      created_at: u.created_at.toISOString(),
    };
  }
}

export class UpdateProfileDto {
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    maxLength: 200,
    description: 'The display name; empty or null removes it',
    example: 'Ada Lovelace',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string | null;

  @ApiPropertyOptional({ description: 'Required to change the password', example: 'correct horse battery staple' })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  current_password?: string;

  @ApiPropertyOptional({
    minLength: 10,
    maxLength: 256,
    description: "The new password (with current_password); the user's other sessions end",
    example: 'plaid lantern orbit seventy',
  })
  @IsOptional()
  @IsString()
  @MaxLength(1024)
  new_password?: string;
}

export class InvitationDto {
  @ApiProperty({ format: 'uuid', example: EX.invitationId }) id: string;
  @ApiProperty({ example: 'colleague@acme.example' }) email: string;
  @ApiProperty({ enum: ['admin', 'member'], example: 'member' }) role: string;
  @ApiProperty({ format: 'date-time', example: '2026-03-22T13:30:00.000Z' }) expires_at: string;
  @ApiProperty({ format: 'date-time', example: EX.createdAt }) created_at: string;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    example: EX.userId,
    description: 'the user who sent it (or last resent it)',
  })
  invited_by: string | null;

  static from(t: AccountToken): InvitationDto {
    return {
      id: t.id,
      email: t.email,
      role: t.role ?? 'member',
      invited_by: t.created_by?.startsWith('user:') ? t.created_by.slice('user:'.length) : null,
      expires_at: t.expires_at.toISOString(),
      created_at: t.created_at.toISOString(),
    };
  }
}

export class TeamDto {
  @ApiProperty({ type: [MemberDto] }) members: MemberDto[];
  @ApiProperty({ type: [InvitationDto], description: 'Invitations not yet accepted and not expired' })
  invitations: InvitationDto[];
}

export class CreateInvitationDto {
  @ApiProperty({ example: 'colleague@acme.example' })
  @IsEmail()
  @MaxLength(254)
  email: string;

  @ApiProperty({ enum: ['admin', 'member'], example: 'member' })
  @IsIn(['admin', 'member'])
  role: 'admin' | 'member';
}

export class AcceptInvitationDto {
  @ApiProperty({ description: 'The token from the invitation link', example: EX.opaqueToken })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  token: string;

  @ApiProperty({ minLength: 10, maxLength: 256, example: 'plaid lantern orbit seventy' })
  @IsString()
  @MaxLength(1024)
  password: string;

  @ApiPropertyOptional({ example: 'Grace Hopper', maxLength: 200, description: 'The name shown to the team' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

export class UpdateMemberDto {
  @ApiProperty({ enum: ['admin', 'member'], description: 'Ownership moves only by transfer', example: 'admin' })
  @IsIn(['admin', 'member'])
  role: 'admin' | 'member';
}

export class TransferOwnershipDto {
  @ApiProperty({
    format: 'uuid',
    description: 'The member who becomes owner; the current owner becomes admin',
    example: EX.userId,
  })
  @IsUUID()
  user_id: string;
}
