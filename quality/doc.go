// Package quality holds Vigia's scoring rules as pure functions: the five quality
// dimensions and the overall score, the consistencia decay model and the score
// explanation, the dataset verdict, schema drift between two column lists, and the
// robust anomaly score with its per-metric tuning.
//
// Nothing here touches a database, the network or the clock: the scan pipeline gathers
// the inputs (profiles, rule results, issue ages, metric history), calls these functions
// and stores what they return. Stored scores are never recomputed, so every function
// takes the state as of one scan and returns that scan's answer.
//
// The formulas are written down for users in README.md beside this file.
package quality
