/**
 * Newer and Older over a list paged by cursor: `cursors` are the pages opened so far (the last
 * is the one shown), `next` is the list's nextCursor.
 */
export function CursorPager(props: {
  cursors: string[];
  next: string | null | undefined;
  onChange(cursors: string[]): void;
}) {
  const { cursors, next } = props;
  return (
    <div className="row pager">
      <button
        type="button"
        disabled={cursors.length === 0}
        onClick={() => props.onChange(cursors.slice(0, -1))}
      >
        Newer
      </button>
      <button type="button" disabled={!next} onClick={() => next && props.onChange([...cursors, next])}>
        Older
      </button>
    </div>
  );
}
