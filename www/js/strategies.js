// The three strategies the page compares, with the labels people read.
export const STRATEGIES = [
  ["verbatim", "verbatim"],
  ["kip", "-(pid+2)"],
  ["mirrorpid", "mirrorpid"],
];

/** The label of a strategy key. */
export const strategyLabel = (key) => STRATEGIES.find(([k]) => k === key)[1];
