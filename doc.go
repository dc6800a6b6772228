// Package vigia is the kernel shared by every Vigia package: the error type with its
// stable codes, the principal carried in a request's context, identifiers, pagination
// and the clock. It imports only the standard library.
package vigia
