/**
 * The writes that can move an object's projection (what consumers route on): a routed write, a create or a delete,
 * or one whose class is not known; an unrouted or no-op write left it as it was. Both engines keep them, with their
 * projections, in the partial index writes_moves, written with this same condition, so that the lanes and a
 * timeline's state band read them from the index alone.
 */
export const MOVES = "class NOT IN ('unrouted', 'no-op')";
