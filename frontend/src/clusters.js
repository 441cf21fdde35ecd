// Clusters of the graph page: Louvain communities (graphology-communities-louvain) of the linked memories, each
// with a colour and a name for the legend. Memories without a link belong to no cluster: they are "unlinked",
// drawn apart (layout.js) and counted on their own.
//
// Louvain runs on an undirected copy of the linked part, each pair weighted by its strongest link: a new memory
// links to the older ones it resembles, so clusters are often stars, and directed modularity gains nothing by
// joining a leaf to its hub (every memory stays a cluster of one). A seeded random order makes the same graph
// always give the same clusters. Colours follow the clusters from one computation to the next by
// overlap, so a live event that reshapes a cluster does not repaint the others.
import Graph from "graphology";
import louvain from "graphology-communities-louvain";

// Distinct from the change highlight (amber), the causal path's red and the faded grey.
export const CLUSTER_COLORS = [
  "#2563eb", "#16a34a", "#9333ea", "#0891b2", "#db2777", "#65a30d",
  "#c2410c", "#4f46e5", "#0d9488", "#be123c", "#a16207", "#7c3aed",
];
export const SMALL_CLUSTER_COLOR = "#94a3b8";
export const UNLINKED_COLOR = "#b6bfcc";
// A cluster smaller than this shares the small clusters' grey: a colour per linked pair would run out.
const MIN_COLOURED = 3;
// How many clusters the legend lists (and the drawing names), largest first.
const LISTED = 12;
const NAME_TERMS = 3;
// A tag is a person's own word for what a memory is about: it names a cluster before an equally common keyword.
const TAG_WEIGHT = 1.25;
// How much a term common to the whole graph still counts (when one cluster is most of the graph, its name is
// what its memories share, not what few of them say).
const COMMON_WEIGHT = 0.5;
const RNG_SEED = 20240521;
// A link stored without a weight still holds its two memories together a little.
const MIN_WEIGHT = 0.1;

// The linked memories as an undirected graph (x, y and size copied), one edge per linked pair with the weight of
// its strongest link: what Louvain clusters and the layout's worker lays out (layout.js).
export function linkedGraph(graph) {
  const linked = new Graph({ type: "undirected" });
  graph.forEachNode((node, attributes) => {
    if (graph.degree(node) > 0) linked.addNode(node, { x: attributes.x, y: attributes.y, size: attributes.size });
  });
  const pairs = new Map();
  graph.forEachEdge((edge, attributes, source, target) => {
    const key = source < target ? `${source}|${target}` : `${target}|${source}`;
    const weight = attributes.weight || MIN_WEIGHT;
    const known = pairs.get(key);
    if (!known || weight > known[2]) pairs.set(key, [source, target, weight]);
  });
  for (const [key, [source, target, weight]] of pairs) linked.addEdgeWithKey(key, source, target, { weight });
  return linked;
}

export function unlinkedNodes(graph) {
  return graph.filterNodes((node) => graph.degree(node) === 0);
}

// Clusters of the graph, largest first: {nodes, key, color, name, coloured, listed}; `previous` (the last
// result) keeps keys, and so colours, where clusters overlap. `listed`: among the LISTED largest coloured ones,
// which the legend and the drawing name.
export function findClusters(graph, previous = null) {
  const linked = linkedGraph(graph);
  const membership = linked.size ? louvain(linked, { getEdgeWeight: "weight", rng: seededRandom(RNG_SEED) }) : {};
  const groups = new Map();
  for (const [node, community] of Object.entries(membership)) {
    if (!groups.has(community)) groups.set(community, []);
    groups.get(community).push(node);
  }
  const clusters = [...groups.values()]
    .sort((a, b) => b.length - a.length || (a[0] < b[0] ? -1 : 1))
    .map((nodes) => ({ nodes, coloured: nodes.length >= MIN_COLOURED }));
  assignColours(clusters, previous);
  clusters.filter((cluster) => cluster.coloured).forEach((cluster, index) => { cluster.listed = index < LISTED; });
  const frequency = termFrequency(graph);
  for (const cluster of clusters) cluster.name = clusterName(graph, cluster.nodes, frequency, graph.order);
  const byNode = new Map();
  for (const cluster of clusters) for (const node of cluster.nodes) byNode.set(node, cluster);
  return { clusters, byNode, unlinked: unlinkedNodes(graph) };
}

// Each coloured cluster takes the key of the previous cluster it shares most nodes with (largest clusters
// choose first), or the smallest key no one has; its colour is the key's in the palette, which repeats past
// twelve (clusters laid out by size, layout.js, put those of one colour far apart).
function assignColours(clusters, previous) {
  const taken = new Set();
  const before = previous ? previous.byNode : new Map();
  for (const cluster of clusters) {
    cluster.color = SMALL_CLUSTER_COLOR;
    cluster.key = null;
    if (!cluster.coloured) continue;
    const overlap = new Map();
    for (const node of cluster.nodes) {
      const old = before.get(node);
      if (old && old.key !== null && !taken.has(old.key)) overlap.set(old.key, (overlap.get(old.key) || 0) + 1);
    }
    let key = null;
    let best = 0;
    for (const [candidate, count] of overlap) {
      if (count > best) [key, best] = [candidate, count];
    }
    if (key === null) {
      key = 0;
      while (taken.has(key)) key += 1;
    }
    taken.add(key);
    cluster.key = key;
    cluster.color = CLUSTER_COLORS[key % CLUSTER_COLORS.length];
  }
}

// How many memories of the graph carry each tag and keyword (a tag counts once per memory even if it is a
// keyword too).
function termFrequency(graph) {
  const frequency = new Map();
  graph.forEachNode((node, attributes) => {
    for (const term of nodeTerms(attributes)) frequency.set(term, (frequency.get(term) || 0) + 1);
  });
  return frequency;
}

function nodeTerms(attributes) {
  return new Set([...(attributes.tags || []), ...(attributes.keywords || [])].map((term) => String(term).toLowerCase()));
}

// The terms that mark a cluster out: frequent in it and rare elsewhere (count in the cluster times the log of
// their rarity in the graph plus COMMON_WEIGHT, tags weighed a little more), shared by at least two of its
// memories; else the words of its best-linked memory.
function clusterName(graph, nodes, frequency, total) {
  const counts = new Map();
  const tags = new Set();
  for (const node of nodes) {
    const attributes = graph.getNodeAttributes(node);
    for (const term of nodeTerms(attributes)) counts.set(term, (counts.get(term) || 0) + 1);
    for (const tag of attributes.tags || []) tags.add(String(tag).toLowerCase());
  }
  const score = (term, count) =>
    count * (Math.log((total + 1) / frequency.get(term)) + COMMON_WEIGHT) * (tags.has(term) ? TAG_WEIGHT : 1);
  const terms = [...counts]
    .filter(([, count]) => count >= 2)
    .map(([term, count]) => [term, score(term, count)])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([term]) => term)
    // "payment" says nothing that "payments" did not.
    .filter((term, index, all) => !all.slice(0, index).some((kept) => singular(kept) === singular(term)))
    .slice(0, NAME_TERMS);
  if (terms.length) return terms.join(", ");
  const hub = nodes.reduce((best, node) => (graph.degree(node) > graph.degree(best) ? node : best), nodes[0]);
  return graph.getNodeAttribute(hub, "label") || hub;
}

function singular(term) {
  return term.length > 3 && term.endsWith("s") ? term.slice(0, -1) : term;
}

// mulberry32: a small seeded generator, so that Louvain's random order is the same on every run.
function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
