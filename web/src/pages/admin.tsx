import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, mutate } from '../api.ts';
import { ClientSecret } from '../components/client-secret.tsx';
import { fieldErrors, ProblemView } from '../components/problem.tsx';
import {
  CHANNELS,
  type ClientView as Client,
  type CreatedClient,
  GRANTABLE_SCOPES,
  PRIORITIES,
  type QueueRow,
  type QuotaView,
  type UserView as User,
} from '../contract.ts';
import { sessionIsOperator } from '../session.ts';

function Queues() {
  const client = useQueryClient();
  const queues = useQuery({
    queryKey: ['queues'],
    queryFn: () => get<{ queues: QueueRow[] }>('/admin/queues'),
    refetchInterval: 2000,
  });
  const toggle = useMutation({
    mutationFn: (v: { action: 'pause' | 'resume'; priority?: string; channel?: string }) =>
      mutate<{ queues: QueueRow[] }>('POST', `/admin/queues/${v.action}`, {
        ...(v.priority ? { priority: v.priority } : {}),
        ...(v.channel ? { channel: v.channel } : {}),
      }),
    onSuccess: (data) => client.setQueryData(['queues'], data),
  });
  // Pauses hold every tenant: the API lets operators only set them.
  const operator = sessionIsOperator();
  const rows = queues.data?.queues ?? [];
  const row = (p: string, c: string) => rows.find((q) => q.priority === p && q.channel === c);
  const allPaused = (p: string) => CHANNELS.every((c) => row(p, c)?.paused);
  return (
    <div className="card">
      <h2>Queues</h2>
      <ProblemView error={queues.error ?? toggle.error} />
      {operator ? null : (
        <p className="muted">
          Your tenant's notifications. Pauses hold every tenant, so only admins of tenant "default" set them.
        </p>
      )}
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Priority</th>
              {CHANNELS.map((c) => (
                <th key={c}>{c}</th>
              ))}
              <th />
            </tr>
          </thead>
          <tbody>
            {PRIORITIES.map((p) => (
              <tr key={p}>
                <td>{p}</td>
                {CHANNELS.map((c) => {
                  const q = row(p, c);
                  return (
                    <td key={c}>
                      {q ? `${q.depth} waiting, ${q.inFlight} in flight` : '–'}
                      {q?.paused ? <strong className="paused"> paused</strong> : null}{' '}
                      {operator ? (
                        <button
                          type="button"
                          className="small"
                          onClick={() =>
                            toggle.mutate({ action: q?.paused ? 'resume' : 'pause', priority: p, channel: c })
                          }
                        >
                          {q?.paused ? 'Resume' : 'Pause'}
                        </button>
                      ) : null}
                    </td>
                  );
                })}
                <td>
                  {operator ? (
                    <button
                      type="button"
                      className="small secondary"
                      onClick={() =>
                        toggle.mutate({ action: allPaused(p) ? 'resume' : 'pause', priority: p })
                      }
                    >
                      {allPaused(p) ? `Resume ${p}` : `Pause ${p}`}
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Users() {
  const client = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: () => get<{ items: User[] }>('/admin/users') });
  const [form, setForm] = useState({ email: '', password: '', role: 'sender', tenant: '' });
  const add = useMutation({
    mutationFn: () => mutate<User>('POST', '/admin/users', { ...form, tenant: form.tenant || undefined }),
    onSuccess: () => {
      setForm({ email: '', password: '', role: 'sender', tenant: '' });
      void client.invalidateQueries({ queryKey: ['users'] });
    },
  });
  const disable = useMutation({
    mutationFn: (id: string) => mutate<User>('POST', `/admin/users/${encodeURIComponent(id)}/disable`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['users'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate();
  };
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [k]: e.target.value });
  return (
    <div className="card">
      <h2>Users</h2>
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Email</th>
              <th>Role</th>
              <th>Tenant</th>
              <th>State</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {(users.data?.items ?? []).map((u) => (
              <tr key={u.id}>
                <td>{u.email}</td>
                <td>{u.role}</td>
                <td>{u.tenant}</td>
                <td>{u.disabled ? 'disabled' : 'active'}</td>
                <td>
                  {u.disabled ? null : (
                    <button type="button" className="small secondary" onClick={() => disable.mutate(u.id)}>
                      Disable
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form onSubmit={submit} className="row">
        <label>
          Email
          <input value={form.email} onChange={set('email')} />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete="new-password"
            value={form.password}
            onChange={set('password')}
          />
          {fieldErrors(add.error, 'password').map((m) => (
            <span key={m} className="field-error">
              {m}
            </span>
          ))}
        </label>
        <label>
          Role
          <select value={form.role} onChange={set('role')}>
            <option>admin</option>
            <option>sender</option>
            <option>viewer</option>
          </select>
        </label>
        <label>
          Tenant
          <input value={form.tenant} placeholder="(mine)" onChange={set('tenant')} />
        </label>
        <button type="submit">Add user</button>
      </form>
      <ProblemView error={users.error ?? add.error ?? disable.error} />
    </div>
  );
}

function Clients() {
  const client = useQueryClient();
  const clients = useQuery({
    queryKey: ['clients'],
    queryFn: () => get<{ items: Client[] }>('/admin/clients'),
  });
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['notifications:send']);
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);
  const add = useMutation({
    mutationFn: () => mutate<CreatedClient>('POST', '/admin/clients', { name, scopes }),
    onSuccess: (c) => {
      setSecret({ id: c.client_id, secret: c.client_secret });
      setName('');
      void client.invalidateQueries({ queryKey: ['clients'] });
    },
  });
  return (
    <div className="card">
      <h2>Service clients</h2>
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Client ID</th>
              <th>Scopes</th>
              <th>Tenant</th>
            </tr>
          </thead>
          <tbody>
            {(clients.data?.items ?? []).map((c) => (
              <tr key={c.client_id}>
                <td>{c.name}</td>
                <td>
                  <code>{c.client_id}</code>
                </td>
                <td>{c.scopes.join(' ')}</td>
                <td>{c.tenant}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          add.mutate();
        }}
      >
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        {GRANTABLE_SCOPES.map((s) => (
          <label key={s} className="inline">
            <input
              type="checkbox"
              checked={scopes.includes(s)}
              onChange={(e) => setScopes(e.target.checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
            />{' '}
            {s}
          </label>
        ))}
        <button type="submit">Add client</button>
      </form>
      {secret ? <ClientSecret id={secret.id} secret={secret.secret} /> : null}
      <ProblemView error={clients.error ?? add.error} />
    </div>
  );
}

type QuotaLimit = QuotaView['total'];

/** One limit's cells: its rates and, with a daily limit, today's usage as a bar. */
function QuotaCells({ limit }: { limit: QuotaLimit }) {
  const perDay = limit.perDay;
  return (
    <>
      <td>{limit.ratePerSecond === undefined ? '-' : `${limit.ratePerSecond}/s (burst ${limit.burst})`}</td>
      <td>
        {perDay === undefined ? (
          `${limit.usedToday} today`
        ) : (
          <>
            <progress max={perDay} value={Math.min(perDay, limit.usedToday)} aria-label="used today" />{' '}
            {limit.usedToday} / {perDay} today
          </>
        )}
      </td>
    </>
  );
}

/** Every tenant's quota and today's usage (GET /admin/quotas): the operator's only. */
function Quotas() {
  const quotas = useQuery({
    queryKey: ['quotas'],
    queryFn: () => get<{ items: QuotaView[] }>('/admin/quotas'),
    refetchInterval: 5000,
  });
  const rows = (quotas.data?.items ?? []).flatMap((q) => [
    { key: `${q.tenant} total`, tenant: q.tenant, scope: 'total', limit: q.total },
    ...Object.entries(q.channels).map(([channel, limit]) => ({
      key: `${q.tenant} ${channel}`,
      tenant: q.tenant,
      scope: channel,
      limit: limit as QuotaLimit,
    })),
  ]);
  return (
    <div className="card">
      <h2>Quotas</h2>
      <ProblemView error={quotas.error} />
      <p className="muted">
        Acceptance limits per tenant, set with <code>herald quotas set</code> or PUT
        /admin/tenants/&#123;tenant&#125;/quotas.
      </p>
      <div className="table-scroll">
        <table>
          <thead>
            <tr>
              <th>Tenant</th>
              <th>Limit</th>
              <th>Per second</th>
              <th>Per day (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {rows.length === 0 ? (
              <tr>
                <td colSpan={4} className="muted">
                  No tenant has a quota.
                </td>
              </tr>
            ) : (
              rows.map((r) => (
                <tr key={r.key} data-quota={r.key}>
                  <td>{r.tenant}</td>
                  <td>{r.scope}</td>
                  <QuotaCells limit={r.limit} />
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </div>
  );
}

export function AdminPage() {
  return (
    <section>
      <h1>Admin</h1>
      <Queues />
      {/* Quotas limit every tenant: the API shows them to operators only. */}
      {sessionIsOperator() ? <Quotas /> : null}
      <Users />
      <Clients />
    </section>
  );
}
