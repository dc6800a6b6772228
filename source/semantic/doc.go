// Package semantic recognises what the values of a column are (e-mail addresses, phone
// numbers, Portuguese tax numbers, IBANs, dates written as text, UUIDs) and reduces values
// to masks (digit → 9, letter → A). Its functions are pure: they see one value at a time,
// keep no value, and return only types, counts and masks, so that the source package can
// run them over a sample without any value leaving the profile.
package semantic
