import { ProblemError } from '../api.ts';

/** Shows an error; for problem+json answers, the detail and every field error (as text, never HTML). */
export function ProblemView(props: { error: unknown }) {
  if (!props.error) return null;
  if (props.error instanceof ProblemError) {
    const { problem } = props.error;
    return (
      <div className="problem" role="alert">
        <strong>{problem.title ?? `Error ${problem.status}`}</strong>
        {problem.detail ? <span> {problem.detail}</span> : null}
        {problem.code ? <code className="code"> {problem.code}</code> : null}
        {problem.errors && problem.errors.length > 0 ? (
          <ul className="field-errors">
            {problem.errors.map((e) => (
              <li key={`${e.path}:${e.message}`}>
                <code>{e.path}</code> {e.message}
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    );
  }
  return (
    <div className="problem" role="alert">
      {props.error instanceof Error ? props.error.message : String(props.error)}
    </div>
  );
}

/** The field errors whose path names `field` (e.g. body/recipient/email for "recipient"). */
export function fieldErrors(error: unknown, field: string): string[] {
  if (!(error instanceof ProblemError)) return [];
  return (error.problem.errors ?? [])
    .filter((e) => e.path.replace(/^body\//, '').startsWith(field))
    .map((e) => e.message);
}
