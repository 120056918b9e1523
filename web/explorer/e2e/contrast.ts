// WCAG contrast of the text a page shows: for every visible element with its own text, the ratio of its colour to
// the first opaque background behind it. Runs in the page (page.evaluate); returns the elements below the bar
// (4.5:1, or 3:1 for large text), described for a test failure.
export function lowContrast(): string[] {
  const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
  const lum = ([r, g, b]: number[]) => {
    const f = (v: number) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el: Element | null): number[] => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const faded = (el: Element | null) => { for (; el; el = el.parentElement) if (Number(getComputedStyle(el).opacity) < 1) return true; return false; };
  const out: string[] = [];
  for (const el of Array.from(document.querySelectorAll("body *"))) {
    const own = Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== "");
    const r = el.getBoundingClientRect();
    if (!own || r.width === 0 || r.height === 0 || faded(el)) continue; // dimmed on purpose: off the traced path
    const s = getComputedStyle(el);
    if (s.visibility === "hidden") continue;
    const [a, b] = [lum(rgb(s.color).slice(0, 3)), lum(background(el))];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const large = parseFloat(s.fontSize) >= 24 || (parseFloat(s.fontSize) >= 18.66 && Number(s.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) out.push(`${el.tagName.toLowerCase()}.${el.className} "${el.textContent!.trim().slice(0, 40)}" ${ratio.toFixed(2)}:1`);
  }
  return out;
}
