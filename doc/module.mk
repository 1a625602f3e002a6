## doc/module.mk: the documentation in the tree, and the section-3 man pages.
EXTRA_DIST += doc/porting.md
