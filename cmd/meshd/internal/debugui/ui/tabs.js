// Switching between the graph, proxies, problems and clusters tabs.

import { fitNodeTexts } from './graph.js';
import { fitUnlessMoved } from './view.js';

export function showTab(name) {
  for (const b of document.querySelectorAll('.tab-button')) b.classList.toggle('active', b.dataset.tab === name);
  for (const p of document.querySelectorAll('.tab-pane')) p.classList.toggle('active', p.id === 'tab-' + name);
  document.body.dataset.tab = name;
  if (name === 'graph') {
    // Labels drawn while the graph was hidden could not be measured.
    fitNodeTexts();
    fitUnlessMoved();
  }
}
