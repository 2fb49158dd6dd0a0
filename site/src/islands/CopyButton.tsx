// Copy a hash to the clipboard: a check mark for 2 seconds after copying and the "Hash copied!" toast.
import { useEffect, useRef, useState } from 'react';
import { toast } from '../lib/toast.ts';

export const COPY_FEEDBACK_MS = 2000;

export default function CopyButton({ value, label = 'Copy hash' }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      const area = document.createElement('textarea');
      area.value = value;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    toast({ title: 'Hash copied!', description: 'SHA-256 hash copied to clipboard' });
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setCopied(false), COPY_FEEDBACK_MS);
  };
  return (
    <button
      type="button"
      className="btn-secondary shrink-0 px-2 py-1"
      onClick={copy}
      aria-label={copied ? 'Copied' : label}
      title={label}
      data-copied={copied || undefined}
    >
      {copied ? (
        <svg
          className="h-4 w-4 text-emerald-600 dark:text-emerald-400"
          viewBox="0 0 24 24"
          fill="none"
          stroke="currentColor"
          strokeWidth="3"
          aria-hidden="true"
        >
          <path d="M5 13l4 4L19 7" />
        </svg>
      ) : (
        <svg
          className="h-4 w-4"
          viewBox="0 0 24 24"
          fill="none"
          stroke="currentColor"
          strokeWidth="2"
          aria-hidden="true"
        >
          <rect x="9" y="9" width="12" height="12" rx="2" />
          <path d="M5 15V5a2 2 0 0 1 2-2h10" />
        </svg>
      )}
    </button>
  );
}
