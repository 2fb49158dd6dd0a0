// A day's anchoring note (lib/anchoring.ts) as the /ledgers cards and the /verify result show it: one plain
// sentence, and the pipeline's own words (calendars, errors) behind a "Details" disclosure. Not an island of its
// own: rendered inside LedgersBrowser and SearchResultPanel.
import type { AnchoringNote } from '../../../core/anchoring-note.ts';

export function AnchoringNoteView({ note, id }: { note: AnchoringNote; id?: string }) {
  return (
    <div
      id={id}
      className="text-xs text-amber-800 dark:text-amber-300"
      data-testid="anchoring-delayed"
      data-kind={note.kind}
    >
      <p data-testid="anchoring-sentence">{note.sentence}.</p>
      <details className="mt-1">
        <summary className="cursor-pointer underline decoration-dotted underline-offset-2">Details</summary>
        <p className="mt-1 font-mono break-words" data-testid="anchoring-details">
          {note.details}
        </p>
      </details>
    </div>
  );
}
