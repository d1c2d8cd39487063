import { type Ref, useImperativeHandle, useRef } from 'react';

/** What the page can ask of the editor: put the caret on a line (an error's "line 12" link). */
export interface JsonEditorHandle {
  selectLine(line: number): void;
}

/**
 * A monospace textarea with a gutter of line numbers, the lines that have errors marked in the
 * gutter (their messages as its title). Lines do not wrap, so gutter and text stay aligned.
 */
export function JsonEditor(props: {
  name: string;
  label: string;
  value: string;
  onChange(value: string): void;
  /** The error messages of each line, by 1-based line number. */
  errorLines: ReadonlyMap<number, string[]>;
  rows?: number;
  ref?: Ref<JsonEditorHandle>;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lines = props.value.split('\n');
  useImperativeHandle(props.ref, () => ({
    selectLine(line: number) {
      const textarea = area.current;
      if (!textarea) return;
      const before = lines.slice(0, line - 1).join('\n');
      const start = line > 1 ? before.length + 1 : 0;
      textarea.focus();
      textarea.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
    },
  }));
  return (
    <label className="json-field">
      {props.label}
      <div className="json-editor">
        <div className="json-gutter" ref={gutter} aria-hidden="true">
          {lines
            .map((_, i) => i + 1)
            .map((line) => {
              const errors = props.errorLines.get(line);
              return (
                <div
                  key={line}
                  className={errors ? 'gutter-line has-error' : 'gutter-line'}
                  data-line={line}
                  title={errors?.join('\n')}
                >
                  {line}
                </div>
              );
            })}
        </div>
        <textarea
          ref={area}
          name={props.name}
          rows={props.rows ?? 18}
          wrap="off"
          spellCheck={false}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
    </label>
  );
}
