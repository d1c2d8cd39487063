import { Fragment } from 'react';
import { durationMs } from '../contract.ts';

/**
 * A workflow's steps as a vertical list of boxes joined by arrows (plain DOM: no inline script,
 * nothing for the CSP to refuse, no drawing library). It draws whatever the editor holds, so a
 * step may be half written: every field is read as unknown and shown as text, never as HTML.
 * Steps are numbered from 0, as the API's error paths (`steps/2/for`) and a run's steps count.
 */

const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

const UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
];

/** An ISO 8601 duration with its length in words (`PT90M (1 h 30 min)`), by the server's own parser. */
function duration(value: unknown): string {
  if (typeof value !== 'string') return text(value);
  let ms = durationMs(value);
  if (ms === undefined) return value;
  const parts: string[] = [];
  for (const [size, unit] of UNITS) {
    const n = Math.floor(ms / size);
    if (n > 0) parts.push(`${n} ${unit}`);
    ms -= n * size;
  }
  if (ms > 0) parts.push(`${ms} ms`);
  return `${value} (${parts.join(' ')})`;
}

/** What one step does, in a few words: its channel and template, its duration, its key. */
export function describeStep(step: unknown): { kind: string; lines: string[] } {
  if (typeof step !== 'object' || step === null || Array.isArray(step))
    return { kind: '?', lines: [`not a step: ${text(step)}`] };
  const s = step as Record<string, unknown>;
  const kind = typeof s.type === 'string' ? s.type : '?';
  const lines: string[] = [];
  const by = s.key === undefined ? '' : ` per ${text(s.key)}`;
  if (kind === 'send') {
    const what = s.template !== undefined ? `template ${text(s.template)}` : 'inline content';
    lines.push(`${s.channel === undefined ? 'no channel' : text(s.channel)} · ${what}`);
  } else if (kind === 'delay') {
    lines.push(`wait ${duration(s.for)}`);
  } else if (kind === 'digest') {
    lines.push(`gather for ${duration(s.for)}${by}`);
  } else if (kind === 'throttle') {
    lines.push(`at most ${text(s.limit)} in ${duration(s.for)}${by}`);
  }
  if (s.if !== undefined) lines.push(`only if ${text(s.if)}`);
  return { kind, lines };
}

export function WorkflowDiagram(props: {
  steps: unknown[];
  /** The field errors of each step, by its index. */
  errors?: ReadonlyMap<number, string[]>;
  /** A step's status in a run, by its index (the run page). */
  statuses?: ReadonlyMap<number, string>;
}) {
  if (props.steps.length === 0) return <p className="muted">No steps yet.</p>;
  return (
    <ol className="diagram" aria-label="Steps">
      {props.steps.map((step, index) => {
        const { kind, lines } = describeStep(step);
        const errors = props.errors?.get(index) ?? [];
        const status = props.statuses?.get(index);
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: a step is its position in the list
          <Fragment key={index}>
            {index > 0 ? <li className="diagram-arrow" aria-hidden="true" /> : null}
            <li
              className={`diagram-step kind-${kind.replace(/[^a-z]/g, '')}${errors.length ? ' has-error' : ''}`}
              data-step={index}
            >
              <div className="diagram-head">
                <span className="diagram-index">{index}</span>
                <strong>{kind}</strong>
                {status ? <span className={`status step-${status.toLowerCase()}`}>{status}</span> : null}
              </div>
              {lines.map((line) => (
                <div key={line} className="diagram-line">
                  {line}
                </div>
              ))}
              {errors.map((message) => (
                <div key={message} className="field-error">
                  {message}
                </div>
              ))}
            </li>
          </Fragment>
        );
      })}
    </ol>
  );
}
