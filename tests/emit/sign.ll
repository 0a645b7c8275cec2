; emit-llvm small.ms sign float
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: readwrite)
define noundef i1 @m0.entry(ptr nocapture readonly %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr #0 {
entry:
  %4 = getelementptr i8, ptr %1, i64 8
  %pay1 = load double, ptr %4, align 4
  %5 = fcmp olt double %pay1, 0.000000e+00
  br i1 %5, label %m0.sign.0.exit, label %sign.join1.i

sign.join1.i:                                     ; preds = %entry
  %6 = fcmp ogt double %pay1, 0.000000e+00
  br i1 %6, label %m0.sign.0.exit, label %sign.join2.i

sign.join2.i:                                     ; preds = %sign.join1.i
  br label %m0.sign.0.exit

m0.sign.0.exit:                                   ; preds = %entry, %sign.join1.i, %sign.join2.i
  %common.ret.op.i = phi { i1, i64 } [ { i1 true, i64 0 }, %sign.join2.i ], [ { i1 true, i64 1 }, %sign.join1.i ], [ { i1 true, i64 -1 }, %entry ]
  %7 = extractvalue { i1, i64 } %common.ret.op.i, 0
  br i1 %7, label %ok, label %common.ret

common.ret:                                       ; preds = %m0.sign.0.exit, %ok
  ret i1 %7

ok:                                               ; preds = %m0.sign.0.exit
  %8 = extractvalue { i1, i64 } %common.ret.op.i, 1
  store i64 3, ptr %3, align 4
  %9 = getelementptr i8, ptr %3, i64 8
  store i64 %8, ptr %9, align 4
  br label %common.ret
}

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: readwrite) }
