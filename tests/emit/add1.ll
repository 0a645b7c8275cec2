; emit-llvm small.ms add1 int
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare { i64, i1 } @llvm.sadd.with.overflow.i64(i64, i64) #0

declare i1 @mist_rt_prim(ptr, i32, i32, ptr, ptr) local_unnamed_addr

declare void @mist_rt_fail(ptr, i32) local_unnamed_addr

declare i1 @mist_rt_bad_value(ptr, ptr, i32) local_unnamed_addr

define noundef i1 @m0.entry(ptr %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr {
entry:
  %scratch3.i = alloca [4 x [2 x i64]], align 16
  %vm = load ptr, ptr %0, align 8, !invariant.load !0
  %4 = getelementptr i8, ptr %1, i64 8
  %pay = load i64, ptr %4, align 4
  %5 = getelementptr i8, ptr %vm, i64 264
  %depth = load i32, ptr %5, align 4
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch3.i)
  %6 = tail call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %pay, i64 1)
  %7 = extractvalue { i64, i1 } %6, 1
  br i1 %7, label %slow.i, label %fast.i, !prof !1

fast.i:                                           ; preds = %entry
  %8 = extractvalue { i64, i1 } %6, 0
  br label %join.i

slow.i:                                           ; preds = %entry
  %vals1.i = getelementptr inbounds i8, ptr %scratch3.i, i64 32
  store i64 3, ptr %scratch3.i, align 16
  %9 = getelementptr inbounds i8, ptr %scratch3.i, i64 8
  store i64 %pay, ptr %9, align 8
  %10 = getelementptr inbounds i8, ptr %scratch3.i, i64 16
  store i64 3, ptr %10, align 16
  %11 = getelementptr inbounds i8, ptr %scratch3.i, i64 24
  store i64 1, ptr %11, align 8
  %12 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch3.i, ptr nonnull %vals1.i)
  br i1 %12, label %ok.i, label %fail.i, !prof !2

ok.i:                                             ; preds = %slow.i
  %tag.i = load i64, ptr %vals1.i, align 16
  %13 = getelementptr inbounds i8, ptr %scratch3.i, i64 40
  %pay.i = load i64, ptr %13, align 8
  %14 = icmp eq i64 %tag.i, 3
  br i1 %14, label %join.i, label %badtype.i, !prof !2

fail.i:                                           ; preds = %slow.i
  call void @mist_rt_fail(ptr nonnull %0, i32 0)
  br label %m0.add1.0.exit

badtype.i:                                        ; preds = %ok.i
  %vals2.i = getelementptr inbounds i8, ptr %scratch3.i, i64 48
  store i64 %tag.i, ptr %vals2.i, align 16
  %15 = getelementptr inbounds i8, ptr %scratch3.i, i64 56
  store i64 %pay.i, ptr %15, align 8
  %16 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals2.i, i32 1)
  call void @mist_rt_fail(ptr nonnull %0, i32 2)
  br label %m0.add1.0.exit

join.i:                                           ; preds = %ok.i, %fast.i
  %17 = phi i64 [ %8, %fast.i ], [ %pay.i, %ok.i ]
  %18 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %17, 1
  br label %m0.add1.0.exit

m0.add1.0.exit:                                   ; preds = %fail.i, %badtype.i, %join.i
  %common.ret.op.i = phi { i1, i64 } [ zeroinitializer, %fail.i ], [ zeroinitializer, %badtype.i ], [ %18, %join.i ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch3.i)
  store i32 %depth, ptr %5, align 4
  %19 = extractvalue { i1, i64 } %common.ret.op.i, 0
  br i1 %19, label %ok, label %common.ret

common.ret:                                       ; preds = %m0.add1.0.exit, %ok
  ret i1 %19

ok:                                               ; preds = %m0.add1.0.exit
  %20 = extractvalue { i1, i64 } %common.ret.op.i, 1
  store i64 3, ptr %3, align 4
  %21 = getelementptr i8, ptr %3, i64 8
  store i64 %20, ptr %21, align 4
  br label %common.ret
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #1

attributes #0 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }

!0 = !{}
!1 = !{!"branch_weights", i32 1, i32 2000}
!2 = !{!"branch_weights", i32 2000, i32 1}
