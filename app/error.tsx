"use client";

export default function ErrorPage({ reset }: { error: Error; reset: () => void }) {
  return (
    <main id="main" tabIndex={-1} className="page narrow">
      <section className="card" role="alert">
        <h1>页面加载失败</h1>
        <p className="muted">服务暂时不可用，请稍后重试。</p>
        <button type="button" className="primary" onClick={reset}>
          重试
        </button>
      </section>
    </main>
  );
}
