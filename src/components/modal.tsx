"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";

/** A modal dialog (the browser's own: Esc closes it, focus stays inside), open while mounted. */
export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} className="modal" aria-labelledby="modal-title" onClose={onClose}>
      <div className="modal-head">
        <h2 id="modal-title">{title}</h2>
        <button type="button" className="ghost" onClick={onClose} aria-label="关闭">
          ✕
        </button>
      </div>
      {children}
    </dialog>
  );
}

async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<"idle" | "done" | "failed">("idle");
  return (
    <button
      type="button"
      className="secondary"
      onClick={() => void copy(text).then((ok) => setState(ok ? "done" : "failed"))}
    >
      {state === "done" ? "已复制" : state === "failed" ? "复制失败，请手动选中" : label}
    </button>
  );
}

/** A row of tabs inside a dialog: each a button that shows its panel, the chosen one marked. */
export function InlineTabs<T extends string>({
  label,
  tabs,
  value,
  onChange,
}: {
  label: string;
  tabs: readonly (readonly [T, string])[];
  value: T;
  onChange: (tab: T) => void;
}) {
  return (
    <div className="tabs-inline" role="tablist" aria-label={label}>
      {tabs.map(([id, name]) => (
        <button
          key={id}
          type="button"
          role="tab"
          aria-selected={value === id}
          className={value === id ? "secondary" : "ghost"}
          onClick={() => onChange(id)}
        >
          {name}
        </button>
      ))}
    </div>
  );
}
