import { CHANNELS } from '../contract.ts';

/**
 * The labelled channel select of the UI's forms and filters; `all` adds an empty choice ("all")
 * for filters.
 */
export function ChannelSelect(props: {
  value: string;
  onChange(value: string): void;
  all?: boolean;
  name?: string;
}) {
  return (
    <label>
      Channel
      <select name={props.name} value={props.value} onChange={(e) => props.onChange(e.target.value)}>
        {props.all ? <option value="">all</option> : null}
        {CHANNELS.map((c) => (
          <option key={c}>{c}</option>
        ))}
      </select>
    </label>
  );
}
