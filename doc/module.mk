## doc/module.mk: the documentation in the tree, and the section-3 man
## pages (each module's owner adds its page to man3_MANS here).
man3_MANS += doc/fl_spinlock.3 doc/fl_counter.3
EXTRA_DIST += $(man3_MANS) doc/design.md doc/porting.md
