// Draws the page's Mermaid diagrams: each <pre class="mermaid"> (its text is the diagram's
// source) becomes a <div class="mermaid-diagram"> holding Mermaid's SVG. The page loads
// this file after the pinned mermaid.min.js, both deferred, and only when it has a diagram.
// Settings a note cannot change (its %%{init}%% directives are dropped for the keys in
// `secure`): strict security (no click callbacks or javascript: links, labels sanitized by
// Mermaid's DOMPurify), SVG text labels instead of HTML in <foreignObject>, and the page's
// theme: <html data-theme> is light, dark, or system, which follows prefers-color-scheme
// and redraws when the reader's scheme changes. A diagram Mermaid cannot draw stays text.
(() => {
  'use strict';
  const mermaid = window.mermaid;
  const blocks = [...document.querySelectorAll('pre.mermaid')].map((pre) => ({ shown: pre, source: pre.textContent }));
  if (!mermaid || blocks.length === 0) {
    return;
  }
  const page = document.documentElement.dataset.theme;
  const dark = window.matchMedia('(prefers-color-scheme: dark)');
  let drawn = 0;

  const draw = async () => {
    mermaid.initialize({
      startOnLoad: false,
      securityLevel: 'strict',
      htmlLabels: false,
      flowchart: { htmlLabels: false },
      theme: page === 'dark' || (page !== 'light' && dark.matches) ? 'dark' : 'default',
      suppressErrorRendering: true,
      secure: ['secure', 'securityLevel', 'startOnLoad', 'maxTextSize', 'suppressErrorRendering', 'maxEdges',
        'htmlLabels', 'dompurifyConfig', 'theme', 'darkMode'],
    });
    for (const block of blocks) {
      try {
        drawn += 1;
        const { svg } = await mermaid.render('mermaid-diagram-' + drawn, block.source);
        const figure = document.createElement('div');
        figure.className = 'mermaid-diagram';
        figure.innerHTML = svg;
        block.shown.replaceWith(figure);
        block.shown = figure;
      } catch {
        // The source stays as it is shown: its text, or the diagram drawn before.
      }
    }
  };

  let drawing = draw();
  if (page !== 'light' && page !== 'dark') {
    dark.addEventListener('change', () => {
      drawing = drawing.then(draw);
    });
  }
})();
