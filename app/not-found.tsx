import Link from "next/link";

export default function NotFound() {
  return (
    <main id="main" tabIndex={-1} className="page narrow">
      <section className="card">
        <h1>页面不存在</h1>
        <p className="muted">您访问的地址没有对应的页面。</p>
        <Link href="/">返回首页</Link>
      </section>
    </main>
  );
}
