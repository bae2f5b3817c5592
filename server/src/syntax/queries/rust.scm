; Rust definitions. The capture `@definition.KIND` marks the node that spans the
; definition, `@name` its name; `@trait` is the trait an impl block implements.
; A `.toplevel` suffix keeps the definition only outside function bodies.

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.method
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(impl_item trait: (_) @trait type: (_) @name) @definition.impl
(impl_item !trait type: (_) @name) @definition.impl
(mod_item name: (identifier) @name) @definition.module
(type_item name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant.toplevel
(static_item name: (identifier) @name) @definition.constant.toplevel
(macro_definition name: (identifier) @name) @definition.function
