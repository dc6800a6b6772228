package store

import "io/fs"

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		// The directory is embedded at compile time; a failure here is a build defect.
		panic(err)
	}
	return sub
}
