import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useRef, useState } from 'react';
import { call, get, mutate, ProblemError } from '../api.ts';
import { JsonEditor, type JsonEditorHandle } from '../components/json-editor.tsx';
import { CursorPager } from '../components/pager.tsx';
import { ProblemView } from '../components/problem.tsx';
import { WorkflowDiagram } from '../components/workflow-diagram.tsx';
import { PRIORITIES, type TriggerAccepted, type WorkflowView } from '../contract.ts';
import { lineAt, lineOfPath, locateJson } from '../json-locations.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { hasScope } from '../session.ts';

const PAGE = 50;

/** What a new workflow's editor starts with: the shape PUT /workflows/{key} takes, to edit. */
const NEW_DEFINITION = `{
  "name": "A new workflow",
  "steps": [
    { "type": "send", "channel": "inapp", "content": { "title": "Hello", "body": "Hello {{ name }}" } }
  ]
}`;

/**
 * The editor's text of a saved workflow: the fields PUT takes (a null name or category is left
 * out, as PUT takes none), one step a line so that an error's line is its step's.
 */
function definitionText(w: WorkflowView): string {
  const steps = w.steps.map((s) => `    ${JSON.stringify(s)}`).join(',\n');
  const head = [
    w.name === null ? '' : `  "name": ${JSON.stringify(w.name)},\n`,
    w.category === null ? '' : `  "category": ${JSON.stringify(w.category)},\n`,
  ].join('');
  return `{\n${head}  "steps": [${steps ? `\n${steps}\n  ` : ''}]\n}`;
}

/** One field error placed where it belongs: its step (if any) and its line of the editor. */
interface PlacedError {
  path: string;
  message: string;
  step: number | null;
  /** The path inside its step (`for`), or the whole path for an error outside the steps. */
  field: string;
  line: number | null;
}

/**
 * The problem's field errors placed on the text: `body/steps/2/for` is step 2's `for`, at the
 * line where the text holds it (or holds step 2, when `for` is missing). Read again on each
 * edit, so the marks follow the step as lines move above it.
 */
function placeErrors(error: unknown, text: string): PlacedError[] {
  if (!(error instanceof ProblemError)) return [];
  const locations = locateJson(text);
  if (error.problem.code === NOT_JSON) {
    const offset = locations.syntaxError;
    if (offset === null) return [];
    return [{ path: '', message: 'must be JSON', step: null, field: 'the text', line: lineAt(text, offset) }];
  }
  return (error.problem.errors ?? []).map(({ path, message }) => {
    const inBody = path.replace(/^\/?(body\/?)?/, '');
    const step = /^steps\/(\d+)(?:\/(.*))?$/.exec(inBody);
    return {
      path,
      message,
      step: step ? Number(step[1]) : null,
      field: step ? (step[2] ?? '') : inBody,
      line: lineOfPath(text, locations, inBody),
    };
  });
}

/** The code of a text refused in the browser, before anything is sent, for not being JSON. */
const NOT_JSON = 'NOT_JSON';

function parseDefinition(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ProblemError({
      status: 400,
      title: 'The definition is not JSON',
      detail: (e as Error).message,
      code: NOT_JSON,
    });
  }
}

/**
 * Workflows (docs/workflows.md): the list, an editor of a workflow's JSON definition with the
 * API's validation errors shown at their step (in the diagram) and their line (in the editor),
 * a diagram of the steps, delete, and a trigger for recipients that links to the runs it made.
 * The open workflow is kept in the address bar (`/workflows?key=welcome`).
 */
export function WorkflowsPage() {
  const { search } = useLocation();
  const key = search.get('key');
  const [creating, setCreating] = useState(false);
  const canWrite = hasScope('templates:write');
  return (
    <section>
      <h1>Workflows</h1>
      <WorkflowList
        selected={key}
        onNew={
          canWrite
            ? () => {
                setCreating(true);
                navigate('/workflows');
              }
            : undefined
        }
      />
      {key ? (
        <OpenWorkflow key={key} workflowKey={key} canWrite={canWrite} />
      ) : creating ? (
        <WorkflowEditor workflow={null} canWrite={canWrite} />
      ) : null}
    </section>
  );
}

function WorkflowList(props: { selected: string | null; onNew?: () => void }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (cursor) query.set('cursor', cursor);
  const list = useQuery({
    queryKey: ['workflows', query.toString()],
    queryFn: () => get<{ items: WorkflowView[]; nextCursor: string | null }>(`/workflows?${query}`),
    placeholderData: keepPreviousData,
  });
  return (
    <div className="card">
      <div className="row">
        {props.onNew ? (
          <button type="button" onClick={props.onNew}>
            New workflow
          </button>
        ) : null}
        <Link to="/workflow-runs">All runs</Link>
      </div>
      <ProblemView error={list.error} />
      <div className="table-scroll">
        <table className="workflows">
          <thead>
            <tr>
              <th>Key</th>
              <th>Name</th>
              <th>Category</th>
              <th>Version</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.items ?? []).map((w) => (
              <tr
                key={w.key}
                data-workflow={w.key}
                className={w.key === props.selected ? 'active' : undefined}
              >
                <td>
                  <Link to={`/workflows?key=${encodeURIComponent(w.key)}`}>{w.key}</Link>
                </td>
                <td>{w.name ?? '–'}</td>
                <td>{w.category ?? '–'}</td>
                <td className="version">{w.version}</td>
                <td>{new Date(w.updatedAt).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data && list.data.items.length === 0 && cursors.length === 0 ? (
        <p className="muted">No workflows yet.</p>
      ) : null}
      <CursorPager cursors={cursors} next={list.data?.nextCursor} onChange={setCursors} />
    </div>
  );
}

/** The workflow named in the address bar, read once; its editor starts from that version. */
function OpenWorkflow(props: { workflowKey: string; canWrite: boolean }) {
  const workflow = useQuery({
    queryKey: ['workflow', props.workflowKey],
    queryFn: () => get<WorkflowView>(`/workflows/${encodeURIComponent(props.workflowKey)}`),
    // The editor holds the user's text: a background refetch must not replace it.
    staleTime: Number.POSITIVE_INFINITY,
  });
  if (workflow.error) return <ProblemView error={workflow.error} />;
  if (!workflow.data) return null;
  return (
    <>
      <WorkflowEditor workflow={workflow.data} canWrite={props.canWrite} />
      {hasScope('notifications:send') ? <TriggerForm workflowKey={props.workflowKey} /> : null}
    </>
  );
}

function WorkflowEditor(props: { workflow: WorkflowView | null; canWrite: boolean }) {
  const client = useQueryClient();
  const [key, setKey] = useState(props.workflow?.key ?? '');
  const [text, setText] = useState(props.workflow ? definitionText(props.workflow) : NEW_DEFINITION);
  const [saved, setSaved] = useState<WorkflowView | null>(props.workflow);
  const [confirming, setConfirming] = useState(false);
  const editor = useRef<JsonEditorHandle>(null);
  const save = useMutation({
    mutationFn: async () => {
      const body = parseDefinition(text);
      return call<WorkflowView>(`/workflows/${encodeURIComponent(key.trim())}`, { method: 'PUT', body });
    },
    onSuccess: (result) => {
      setSaved(result.data);
      void client.invalidateQueries({ queryKey: ['workflows'] });
      client.setQueryData(['workflow', result.data.key], result.data);
      if (!props.workflow) navigate(`/workflows?key=${encodeURIComponent(result.data.key)}`);
    },
  });
  const remove = useMutation({
    mutationFn: () => mutate('DELETE', `/workflows/${encodeURIComponent(key)}`),
    // The list is read again before the page moves on, so it never shows the deleted workflow.
    onSuccess: async () => {
      client.removeQueries({ queryKey: ['workflow', key] });
      await client.invalidateQueries({ queryKey: ['workflows'] });
      navigate('/workflows');
    },
  });

  const placed = useMemo(() => placeErrors(save.error, text), [save.error, text]);
  const byStep = new Map<number, string[]>();
  const byLine = new Map<number, string[]>();
  for (const e of placed) {
    const words = `${e.field || 'the step'}: ${e.message}`;
    if (e.step !== null) byStep.set(e.step, [...(byStep.get(e.step) ?? []), words]);
    if (e.line !== null) byLine.set(e.line, [...(byLine.get(e.line) ?? []), words]);
  }
  // The diagram draws the text as it is typed, as far as it parses.
  const steps = useMemo(() => {
    try {
      const value = JSON.parse(text) as { steps?: unknown };
      return Array.isArray(value?.steps) ? (value.steps as unknown[]) : null;
    } catch {
      return null;
    }
  }, [text]);
  // Field errors are listed with their places; any other problem as the other pages show it.
  const problem = save.error instanceof ProblemError && placed.length > 0 ? save.error : null;

  return (
    <div className="split two workflow-editor">
      <div className="card">
        <h2>{props.workflow ? `Workflow ${props.workflow.key}` : 'New workflow'}</h2>
        {saved ? (
          <p className="muted saved-version">
            Version {saved.version}, saved {new Date(saved.updatedAt).toLocaleString()}.{' '}
            <Link to={`/workflow-runs?workflow=${encodeURIComponent(saved.key)}`}>Its runs</Link>
          </p>
        ) : null}
        <form
          className="form"
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <label>
            Key
            <input
              name="key"
              value={key}
              onChange={(e) => setKey(e.target.value)}
              disabled={props.workflow !== null}
              required
            />
          </label>
          <JsonEditor
            ref={editor}
            name="definition"
            label="Definition (JSON: name, category, steps)"
            value={text}
            onChange={setText}
            errorLines={byLine}
          />
          {props.canWrite ? (
            <div className="row">
              <button type="submit" disabled={save.isPending}>
                Save
              </button>
              {props.workflow && !confirming ? (
                <button type="button" className="secondary" onClick={() => setConfirming(true)}>
                  Delete
                </button>
              ) : null}
              {save.isSuccess ? (
                <span className="ok">
                  {save.data.status === 201 ? 'Created' : 'Saved'}: version {save.data.data.version}.
                </span>
              ) : null}
            </div>
          ) : null}
          {confirming ? (
            <div className="notice confirm-delete" role="alertdialog" aria-label="Confirm delete">
              <p>
                Delete workflow {key}? New triggers are refused from then on; runs already started finish with
                the version they started with.
              </p>
              <div className="row">
                <button type="button" onClick={() => remove.mutate()} disabled={remove.isPending}>
                  Yes, delete {key}
                </button>
                <button type="button" className="secondary" onClick={() => setConfirming(false)}>
                  No, keep it
                </button>
              </div>
            </div>
          ) : null}
        </form>
        {problem ? (
          <div className="problem" role="alert">
            <strong>{problem.problem.title ?? `Error ${problem.problem.status}`}</strong>
            {problem.problem.detail ? <span> {problem.problem.detail}</span> : null}
            <ul className="field-errors">
              {placed.map((e) => (
                <li key={`${e.path}:${e.message}`} data-error-path={e.path}>
                  {e.line !== null ? (
                    <button
                      type="button"
                      className="link"
                      onClick={() => editor.current?.selectLine(e.line as number)}
                    >
                      line {e.line}
                    </button>
                  ) : null}{' '}
                  {e.step !== null ? `step ${e.step}, ` : ''}
                  <code>{e.field || e.path}</code> {e.message}
                </li>
              ))}
            </ul>
          </div>
        ) : (
          <ProblemView error={save.error} />
        )}
        <ProblemView error={remove.error} />
      </div>
      <div className="card">
        <h2>Steps</h2>
        {steps ? (
          <WorkflowDiagram steps={steps} errors={byStep} />
        ) : (
          <p className="muted">The diagram shows once the definition is JSON with a "steps" list.</p>
        )}
      </div>
    </div>
  );
}

/** Recipient IDs typed as a list: split on commas, spaces and new lines. */
function idsOf(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** POST /workflows/{key}/trigger for recipient IDs, with variables; links to the runs it made. */
function TriggerForm(props: { workflowKey: string }) {
  const [recipients, setRecipients] = useState('');
  const [variables, setVariables] = useState('{}');
  const [priority, setPriority] = useState('');
  const trigger = useMutation({
    mutationFn: () => {
      let vars: unknown;
      try {
        vars = JSON.parse(variables || '{}');
      } catch {
        throw new ProblemError({
          status: 400,
          title: 'Variables are not JSON',
          errors: [{ path: 'body/variables', message: 'must be a JSON object' }],
        });
      }
      return mutate<TriggerAccepted>('POST', `/workflows/${encodeURIComponent(props.workflowKey)}/trigger`, {
        recipients: idsOf(recipients),
        variables: vars,
        ...(priority ? { priority } : {}),
      });
    },
  });
  const answer = trigger.data;
  return (
    <div className="card trigger">
      <h2>Trigger {props.workflowKey}</h2>
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          trigger.mutate();
        }}
      >
        <div className="row">
          <label>
            Recipient IDs
            <input
              name="recipients"
              value={recipients}
              onChange={(e) => setRecipients(e.target.value)}
              placeholder="user-1842, user-77"
              required
            />
          </label>
          <label>
            Priority
            <select name="priority" value={priority} onChange={(e) => setPriority(e.target.value)}>
              <option value="">default</option>
              {PRIORITIES.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </select>
          </label>
        </div>
        <label>
          Variables (JSON)
          <textarea
            name="variables"
            rows={3}
            value={variables}
            onChange={(e) => setVariables(e.target.value)}
          />
        </label>
        <div className="row">
          <button type="submit" disabled={trigger.isPending}>
            Trigger
          </button>
        </div>
      </form>
      <ProblemView error={trigger.error} />
      {answer ? (
        <div className="trigger-result" data-trigger={answer.triggerId}>
          <p>
            Trigger {answer.triggerId}:{' '}
            <Link to={`/workflow-runs?triggerId=${encodeURIComponent(answer.triggerId)}`}>its runs</Link>
          </p>
          <ul>
            {(answer.runs ?? []).map((r) => (
              <li key={r.runId}>
                {r.recipientId}:{' '}
                <Link to={`/workflow-runs/${encodeURIComponent(r.runId)}`}>run {r.runId}</Link>
              </li>
            ))}
          </ul>
          {answer.refused && answer.refused.length > 0 ? (
            <p className="problem">
              Refused (no such recipient): {answer.refused.map((r) => r.recipientId).join(', ')}.
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
