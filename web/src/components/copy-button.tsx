import { useState } from 'react';

/**
 * Copies `text` to the clipboard. Without clipboard access (an insecure origin, a refused
 * permission) it says so, and the text stays on screen to select by hand.
 */
export function CopyButton(props: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <button type="button" className="secondary small" onClick={() => void copy()} aria-label={props.label}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy by hand' : 'Copy'}
    </button>
  );
}
