import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { get, mutate } from '../api.ts';
import { CursorPager } from '../components/pager.tsx';
import { ProblemView } from '../components/problem.tsx';
import { describeStep } from '../components/workflow-diagram.tsx';
import { FINAL_RUN_STATUSES, RUN_STATUSES, type WorkflowRunView, type WorkflowView } from '../contract.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { hasScope } from '../session.ts';

const PAGE = 20;
/** How often a run that has not ended, and a list showing one, are read again. */
const POLL_MS = 1000;
/** A run in one of these has ended: nothing moves it any more, and it cannot be cancelled. */
const ENDED: ReadonlySet<string> = FINAL_RUN_STATUSES;

/** The list's filters that the address bar carries (`/workflow-runs?workflow=welcome`). */
const FILTERS = ['workflow', 'recipientId', 'triggerId', 'status'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

const time = (iso: string | undefined) => (iso ? new Date(iso).toLocaleString() : '–');

/**
 * Runs of workflows (docs/workflows.md): filtered by workflow, recipient, trigger and status, the
 * filters kept in the address bar so a workflow's or a trigger's link opens its runs.
 */
export function WorkflowRunsPage() {
  const { path, search } = useLocation();
  const filters: Filters = {};
  for (const name of FILTERS) {
    const value = search.get(name);
    if (value) filters[name] = value;
  }
  const [cursors, setCursors] = useState<string[]>([]);
  const query = new URLSearchParams({ limit: String(PAGE) });
  for (const [name, value] of Object.entries(filters)) query.set(name, value);
  const cursor = cursors.at(-1);
  if (cursor) query.set('cursor', cursor);
  const list = useQuery({
    queryKey: ['workflow-runs', query.toString()],
    queryFn: () => get<{ items: WorkflowRunView[]; nextCursor: string | null }>(`/workflow-runs?${query}`),
    placeholderData: keepPreviousData,
    // Runs move by themselves (a delay falls due): read again while any shown has not ended.
    refetchInterval: (q) => (q.state.data?.items.some((r) => !ENDED.has(r.status)) ? POLL_MS : false),
  });
  const apply = (next: Filters) => {
    const params = new URLSearchParams();
    for (const name of FILTERS) if (next[name]) params.set(name, next[name]);
    setCursors([]);
    navigate(params.size ? `${path}?${params}` : path, { replace: true });
  };
  return (
    <section>
      <h1>Workflow runs</h1>
      <RunFilters key={search.toString()} filters={filters} onApply={apply} />
      <ProblemView error={list.error} />
      <div className="table-scroll">
        <table className="runs">
          <thead>
            <tr>
              <th>Run</th>
              <th>Workflow</th>
              <th>Recipient</th>
              <th>Status</th>
              <th>Created</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((r) => (
              <tr key={r.runId} data-run={r.runId}>
                <td>
                  <Link to={`/workflow-runs/${encodeURIComponent(r.runId)}`}>{r.runId}</Link>
                </td>
                <td>
                  <Link to={`/workflows?key=${encodeURIComponent(r.workflow)}`}>{r.workflow}</Link>{' '}
                  <span className="muted">v{r.version}</span>
                </td>
                <td>{r.recipientId}</td>
                <td>
                  <RunStatus status={r.status} />
                </td>
                <td>{time(r.createdAt)}</td>
                <td>{time(r.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data && list.data.items.length === 0 ? <p className="muted">No runs.</p> : null}
      <CursorPager cursors={cursors} next={list.data?.nextCursor} onChange={setCursors} />
    </section>
  );
}

function RunFilters(props: { filters: Filters; onApply(filters: Filters): void }) {
  const [draft, setDraft] = useState<Filters>(props.filters);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    props.onApply(Object.fromEntries(Object.entries(draft).map(([k, v]) => [k, v?.trim() ?? ''])) as Filters);
  };
  const field = (name: 'workflow' | 'recipientId' | 'triggerId', label: string) => (
    <label>
      {label}
      <input
        name={name}
        value={draft[name] ?? ''}
        onChange={(e) => setDraft({ ...draft, [name]: e.target.value })}
      />
    </label>
  );
  return (
    <form className="row filters card" onSubmit={submit}>
      {field('workflow', 'Workflow')}
      {field('recipientId', 'Recipient ID')}
      {field('triggerId', 'Trigger ID')}
      <label>
        Status
        <select
          name="status"
          value={draft.status ?? ''}
          onChange={(e) => setDraft({ ...draft, status: e.target.value })}
        >
          <option value="">any</option>
          {RUN_STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}

function RunStatus(props: { status: string }) {
  return (
    <span className={`status run-status run-${props.status.toLowerCase()}`} data-testid="run-status">
      {props.status}
    </span>
  );
}

/**
 * One run: its facts, a timeline of its steps (each with its status, when it ran or until when
 * it waits, and the notification a send step made), and cancel while it has not ended. Read
 * again every second until it ends.
 */
export function WorkflowRunPage(props: { id: string }) {
  const client = useQueryClient();
  const path = `/workflow-runs/${encodeURIComponent(props.id)}`;
  const run = useQuery({
    queryKey: ['workflow-run', props.id],
    queryFn: () => get<WorkflowRunView>(path),
    refetchInterval: (q) => (q.state.data && ENDED.has(q.state.data.status) ? false : POLL_MS),
  });
  const cancel = useMutation({
    mutationFn: () => mutate<WorkflowRunView>('POST', `${path}/cancel`),
    onSuccess: (data) => client.setQueryData(['workflow-run', props.id], data),
  });
  const r = run.data;
  // The steps' definitions, when the workflow's current version is the run's (a run keeps the
  // version it started with; the API serves only the current one).
  const workflow = useQuery({
    queryKey: ['workflow', r?.workflow],
    queryFn: () => get<WorkflowView>(`/workflows/${encodeURIComponent(r?.workflow ?? '')}`),
    enabled: r !== undefined,
    retry: false,
  });
  const definitions = workflow.data && r && workflow.data.version === r.version ? workflow.data.steps : null;
  return (
    <section>
      <p>
        <Link to="/workflow-runs">← Workflow runs</Link>
      </p>
      <h1>Workflow run</h1>
      <ProblemView error={run.error ?? cancel.error} />
      {r ? (
        <>
          <div className="card">
            <dl className="facts">
              <dt>ID</dt>
              <dd>{r.runId}</dd>
              <dt>Status</dt>
              <dd>
                <RunStatus status={r.status} />
              </dd>
              <dt>Workflow</dt>
              <dd>
                <Link to={`/workflows?key=${encodeURIComponent(r.workflow)}`}>{r.workflow}</Link>, version{' '}
                {r.version}
              </dd>
              <dt>Recipient</dt>
              <dd>
                <Link to={`/recipients?id=${encodeURIComponent(r.recipientId)}`}>{r.recipientId}</Link>
              </dd>
              <dt>Trigger</dt>
              <dd>
                <Link to={`/workflow-runs?triggerId=${encodeURIComponent(r.triggerId)}`}>{r.triggerId}</Link>
              </dd>
              <dt>Priority</dt>
              <dd>{r.priority}</dd>
              <dt>Created</dt>
              <dd>{time(r.createdAt)}</dd>
              <dt>Updated</dt>
              <dd>{time(r.updatedAt)}</dd>
            </dl>
            {ENDED.has(r.status) || !hasScope('notifications:send') ? null : (
              <button
                type="button"
                className="secondary"
                onClick={() => cancel.mutate()}
                disabled={cancel.isPending}
              >
                Cancel the run
              </button>
            )}
          </div>
          <h2>Steps</h2>
          <ol className="timeline run-steps">
            {r.steps.map((s) => {
              const definition = definitions ? describeStep(definitions[s.index]) : null;
              return (
                <li
                  key={s.index}
                  className={`run-step run-step-${s.status.toLowerCase()}`}
                  data-step={s.index}
                >
                  <span className="event-type">
                    {s.index} {s.type}
                  </span>
                  <span className={`status step-status step-${s.status.toLowerCase()}`}>{s.status}</span>
                  <span className="muted">
                    {[
                      definition?.lines.join(' · ') ?? '',
                      s.at ? `at ${time(s.at)}` : '',
                      s.until ? `until ${time(s.until)}` : '',
                    ]
                      .filter(Boolean)
                      .join(' · ')}
                  </span>
                  {s.notificationId ? (
                    <Link to={`/notifications/${encodeURIComponent(s.notificationId)}`}>
                      notification {s.notificationId}
                    </Link>
                  ) : null}
                </li>
              );
            })}
          </ol>
        </>
      ) : null}
    </section>
  );
}
