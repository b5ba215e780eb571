export default function Home() {
  return <main>控制台</main>;
}
