import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsIn, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import type { Tenant } from '../../tenants/entities/tenant.entity.js';
import type { AccountToken } from '../entities/account-token.entity.js';
import type { User } from '../entities/user.entity.js';

export class OrganizationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ enum: ['free', 'developer', 'team', 'business', 'enterprise'] }) plan: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;

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
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: ['owner', 'admin', 'member'] }) role: string;
  @ApiProperty() email_verified: boolean;
  @ApiProperty() totp_enabled: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(u: User): MemberDto {
    return {
      id: u.id,
      email: u.email,
      role: u.role,
      email_verified: u.email_verified,
      totp_enabled: u.totp_enabled,
      created_at: u.created_at.toISOString(),
    };
  }
}

export class UpdateProfileDto {
  @ApiProperty({ description: 'Required to change the password' })
  @IsString()
  @MaxLength(1024)
  current_password: string;

  @ApiProperty({ minLength: 10, maxLength: 256, description: "The new password; the user's other sessions end" })
  @IsString()
  @MaxLength(1024)
  new_password: string;
}

export class InvitationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: ['admin', 'member'] }) role: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(t: AccountToken): InvitationDto {
    return {
      id: t.id,
      email: t.email,
      role: t.role ?? 'member',
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

  @ApiProperty({ enum: ['admin', 'member'] })
  @IsIn(['admin', 'member'])
  role: 'admin' | 'member';
}

export class AcceptInvitationDto {
  @ApiProperty({ description: 'The token from the invitation link' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  token: string;

  @ApiProperty({ minLength: 10, maxLength: 256 })
  @IsString()
  @MaxLength(1024)
  password: string;
}

export class UpdateMemberDto {
  @ApiProperty({ enum: ['admin', 'member'], description: 'Ownership moves only by transfer' })
  @IsIn(['admin', 'member'])
  role: 'admin' | 'member';
}

export class TransferOwnershipDto {
  @ApiProperty({ format: 'uuid', description: 'The member who becomes owner; the current owner becomes admin' })
  @IsUUID()
  user_id: string;
}
