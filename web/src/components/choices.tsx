import { PREFERENCE_CHANNELS, type PreferenceChannel } from '../contract.ts';

/** A choice as the forms edit it: none made, on (`true`) or off (`false`). */
export type Choice = '' | 'on' | 'off';
/** Choices per channel as the API gives and takes them. */
type Choices = Partial<Record<PreferenceChannel, boolean>>;

/** The API's choices as the forms' selects show them. */
export function choicesOf(choices: Choices): Record<PreferenceChannel, Choice> {
  return Object.fromEntries(
    PREFERENCE_CHANNELS.map((c) => [c, choices[c] === undefined ? '' : choices[c] ? 'on' : 'off']),
  ) as Record<PreferenceChannel, Choice>;
}

/** The selects' choices as the API takes them: a channel without a choice is left out. */
export function toChoices(choices: Record<PreferenceChannel, Choice>): Choices {
  return Object.fromEntries(
    PREFERENCE_CHANNELS.filter((c) => choices[c] !== '').map((c) => [c, choices[c] === 'on']),
  );
}

/** "email on, sms off": the choices made, in words. */
export function choiceText(choices: Choices): string {
  return PREFERENCE_CHANNELS.filter((c) => choices[c] !== undefined)
    .map((c) => `${c} ${choices[c] ? 'on' : 'off'}`)
    .join(', ');
}

/** A labelled select of one choice: `none` names the empty one ("no default", "no choice"). */
export function ChoiceSelect(props: {
  label: string;
  value: Choice;
  none: string;
  onChange(value: Choice): void;
  hideLabel?: boolean;
}) {
  const options = (
    <>
      <option value="">{props.none}</option>
      <option value="on">on</option>
      <option value="off">off</option>
    </>
  );
  const change = (value: string) => props.onChange(value as Choice);
  if (props.hideLabel) {
    return (
      <select value={props.value} aria-label={props.label} onChange={(e) => change(e.target.value)}>
        {options}
      </select>
    );
  }
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => change(e.target.value)}>
        {options}
      </select>
    </label>
  );
}
