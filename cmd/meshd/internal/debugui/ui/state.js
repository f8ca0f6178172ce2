// What the modules share: the latest graph and what the user selected.

export const state = {
  summary: null,     // the latest GraphSummary
  byName: new Map(), // name -> CollectionSummary
  byId: new Map(),   // id -> CollectionSummary
  edges: [],         // merged edges: {from, to, kinds: [], reads}
  selected: null,    // the selected collection's name
  panel: null,       // 'collection' | 'explain' | null
  highlight: new Set(), // the collections an explanation involves
  panelLink: null,   // the deep link of what the open panel shows
};
