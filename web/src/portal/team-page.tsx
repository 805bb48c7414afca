import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiProblem, api, unwrap, type Schemas } from '../api/client.js';
import { ProblemNotice } from '../documents/status.js';
import { formatDateTime } from '../format.js';
import { FieldError } from '../field-error.js';

type Role = Schemas['MemberDto']['role'];
type InviteRole = Schemas['CreateInvitationDto']['role'];

const ROLE_LABELS: Record<Role, string> = { owner: 'Owner', admin: 'Admin', member: 'Member' };

/** A role as every page names it: the invitation form, the members table, the invitations, the profile. */
export function roleLabel(role: Role): string {
  return ROLE_LABELS[role] ?? role;
}

/** The roles an invitation or a change may give (owner passes only by a transfer). */
const GIVEN_ROLES: InviteRole[] = ['member', 'admin'];

/** The signed-in account's own record (its role decides what the pages offer). */
export function useProfile(enabled = true) {
  return useQuery({
    queryKey: ['profile'],
    queryFn: () => unwrap(api.GET('/v1/account/profile')),
    staleTime: 30_000,
    enabled,
  });
}

/** Members and roles, invitations by mail; owners and admins manage them (the API enforces it too). */
export function TeamPage() {
  const queryClient = useQueryClient();
  const me = useProfile();
  const team = useQuery({ queryKey: ['team'], queryFn: () => unwrap(api.GET('/v1/account/team')) });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<InviteRole>('member');
  const [formError, setFormError] = useState<{ field: string | null; text: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['team'] });

  const invite = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/account/team/invitations', { body: { email: email.trim(), role } })),
    onSuccess: () => {
      setNotice(`Invitation sent to ${email.trim()}.`);
      setEmail('');
      setFormError(null);
      refresh();
    },
    onError: (e) =>
      // A wait (429, 503) is told with its countdown and a retry below; the text stays in the form.
      setFormError(
        e instanceof ApiProblem && (e.status === 429 || e.status === 503)
          ? null
          : { field: e instanceof ApiProblem ? e.field : null, text: e.message },
      ),
  });
  const inviteWait =
    invite.error instanceof ApiProblem && (invite.error.status === 429 || invite.error.status === 503)
      ? invite.error
      : null;
  const changeRole = useMutation({
    mutationFn: (input: { id: string; role: InviteRole }) =>
      unwrap(
        api.PATCH('/v1/account/team/{userId}', { params: { path: { userId: input.id } }, body: { role: input.role } }),
      ),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/account/team/{userId}', { params: { path: { userId: id } } })),
    onSuccess: refresh,
  });
  const transfer = useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/v1/account/team/transfer-ownership', { body: { user_id: id } })),
    onSuccess: (owner) => {
      setNotice(`${owner?.email ?? 'The member'} is now the owner; you are an admin.`);
      refresh();
      void queryClient.invalidateQueries({ queryKey: ['profile'] });
    },
  });
  const resend = useMutation({
    mutationFn: (id: string) =>
      unwrap(
        api.POST('/v1/account/team/invitations/{invitationId}/resend', { params: { path: { invitationId: id } } }),
      ),
    onSuccess: (sent) => {
      setNotice(`Invitation sent again to ${sent?.email ?? 'the address'}.`);
      refresh();
    },
  });
  const cancel = useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/v1/account/team/invitations/{invitationId}', { params: { path: { invitationId: id } } })),
    onSuccess: refresh,
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!email.trim()) return setFormError({ field: 'email', text: 'Enter the address to invite.' });
    invite.mutate();
  };
  const myRole: Role | undefined = me.data?.role;
  const manages = myRole === 'owner' || myRole === 'admin';
  if (me.data && !manages) {
    return (
      <section>
        <h1 tabIndex={-1}>Team</h1>
        <p className="notice">Only the organisation&apos;s owner and admins manage the team.</p>
      </section>
    );
  }
  const members = team.data?.members ?? [];
  const invitations = team.data?.invitations ?? [];
  return (
    <section>
      <h1 tabIndex={-1}>Team</h1>
      <form className="panel-box" onSubmit={submit} noValidate aria-labelledby="invite-heading">
        <h2 id="invite-heading">Invite someone</h2>
        <div className="inline-form">
          <div className="field">
            <label htmlFor="invite-email">Email address</label>
            <input
              id="invite-email"
              type="email"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              aria-invalid={formError?.field === 'email' || undefined}
              aria-describedby={formError?.field === 'email' ? 'invite-email-error' : undefined}
            />
          </div>
          <div className="field">
            <label htmlFor="invite-role">Role</label>
            <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as InviteRole)}>
              {GIVEN_ROLES.map((r) => (
                <option key={r} value={r}>
                  {roleLabel(r)}
                </option>
              ))}
            </select>
          </div>
        </div>
        <FieldError id="invite-email-error" text={formError?.text} />
        <ProblemNotice error={inviteWait} onRetry={() => invite.mutate()} kept />
        <button type="submit" disabled={invite.isPending}>
          {invite.isPending ? 'Sending…' : 'Send invitation'}
        </button>
      </form>
      {notice && (
        <p className="notice ok" role="status">
          {notice}
        </p>
      )}
      <ProblemNotice
        error={team.error ?? changeRole.error ?? remove.error ?? transfer.error ?? resend.error ?? cancel.error}
      />
      <h2>Members</h2>
      <div className="table-scroll">
        <table>
          <caption className="visually-hidden">Members and their roles</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((member) => (
              <tr key={member.id} data-testid="member-row" data-email={member.email}>
                <td>{member.name ?? <span className="muted">not given</span>}</td>
                <td className="wrap">{member.email}</td>
                <td>
                  {member.role === 'owner' || member.id === me.data?.id ? (
                    roleLabel(member.role)
                  ) : (
                    <select
                      aria-label={`Role of ${member.email}`}
                      value={member.role}
                      onChange={(e) => changeRole.mutate({ id: member.id, role: e.target.value as InviteRole })}
                    >
                      {GIVEN_ROLES.map((r) => (
                        <option key={r} value={r}>
                          {roleLabel(r)}
                        </option>
                      ))}
                    </select>
                  )}
                </td>
                <td>
                  <div className="row-actions">
                    {myRole === 'owner' && member.id !== me.data?.id && (
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => {
                          if (
                            window.confirm(
                              `Make ${member.email} the owner? You become an admin, and only the new owner can undo it.`,
                            )
                          )
                            transfer.mutate(member.id);
                        }}
                      >
                        Make owner<span className="visually-hidden"> {member.email}</span>
                      </button>
                    )}
                    {member.role !== 'owner' && member.id !== me.data?.id && (
                      <button
                        type="button"
                        className="danger"
                        onClick={() => {
                          if (window.confirm(`Remove ${member.email} from the organisation?`)) remove.mutate(member.id);
                        }}
                      >
                        Remove<span className="visually-hidden"> {member.email}</span>
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Pending invitations</h2>
      {invitations.length === 0 ? (
        <div className="empty">
          <p>No invitations waiting.</p>
        </div>
      ) : (
        <ul className="files">
          {invitations.map((invitation) => (
            <li key={invitation.id} data-testid="invitation-row">
              <span className="wrap">{invitation.email}</span>{' '}
              <span className="muted">{roleLabel(invitation.role)}</span>
              <span className="muted">until {formatDateTime(invitation.expires_at)}</span>
              <button type="button" className="secondary" onClick={() => resend.mutate(invitation.id)}>
                Resend<span className="visually-hidden"> to {invitation.email}</span>
              </button>
              <button type="button" className="danger" onClick={() => cancel.mutate(invitation.id)}>
                Cancel<span className="visually-hidden"> the invitation of {invitation.email}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
