; emit-llvm small.ms fib int
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define internal fastcc { i1, i64 } @m0.fib.0(ptr %0, i32 %1, i64 %2) unnamed_addr {
entry:
  %vals31 = alloca [1 x [2 x i64]], align 16
  %vals24 = alloca [1 x [2 x i64]], align 16
  %vals23 = alloca [2 x [2 x i64]], align 16
  %vm = load ptr, ptr %0, align 8
  %3 = icmp slt i64 %2, 2
  br i1 %3, label %then, label %fast

common.ret:                                       ; preds = %join32, %badtype30, %fail26, %fail20, %fail5, %toodeep, %then
  %common.ret.op = phi { i1, i64 } [ %4, %then ], [ zeroinitializer, %toodeep ], [ zeroinitializer, %fail5 ], [ zeroinitializer, %fail20 ], [ zeroinitializer, %fail26 ], [ zeroinitializer, %badtype30 ], [ %39, %join32 ]
  ret { i1, i64 } %common.ret.op

then:                                             ; preds = %entry
  %4 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %2, 1
  br label %common.ret

fast:                                             ; preds = %entry
  %5 = add nsw i64 %2, -1
  %6 = add i32 %1, 1
  %7 = getelementptr i8, ptr %vm, i64 280
  %interrupt = load volatile i32, ptr %7, align 4
  %8 = getelementptr i8, ptr %vm, i64 288
  %deadline = load double, ptr %8, align 8
  %9 = fcmp ogt double %deadline, 0.000000e+00
  %10 = icmp ne i32 %interrupt, 0
  %11 = or i1 %10, %9
  %12 = getelementptr i8, ptr %vm, i64 268
  %max = load i32, ptr %12, align 4
  %13 = getelementptr i8, ptr %vm, i64 272
  %limit = load i64, ptr %13, align 4
  %sp = tail call ptr @llvm.stacksave.p0()
  %14 = ptrtoint ptr %sp to i64
  %15 = icmp ugt i64 %limit, %14
  %16 = icmp sle i32 %max, %1
  %17 = or i1 %16, %15
  %18 = or i1 %11, %17
  br i1 %18, label %deep, label %call

deep:                                             ; preds = %fast
  %19 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %19, align 4
  %20 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %20, label %call, label %toodeep

call:                                             ; preds = %deep, %fast
  %21 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %6, i64 %5)
  %ok3 = extractvalue { i1, i64 } %21, 0
  br i1 %ok3, label %ok4, label %fail5

toodeep:                                          ; preds = %deep
  tail call void @mist_rt_fail(ptr nonnull %0, i32 3)
  br label %common.ret

ok4:                                              ; preds = %call
  %22 = extractvalue { i1, i64 } %21, 1
  %23 = add nsw i64 %2, -2
  %24 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %6, i64 %23)
  %ok18 = extractvalue { i1, i64 } %24, 0
  br i1 %ok18, label %ok19, label %fail20

fail5:                                            ; preds = %call
  tail call void @mist_rt_fail(ptr nonnull %0, i32 4)
  br label %common.ret

ok19:                                             ; preds = %ok4
  %25 = extractvalue { i1, i64 } %24, 1
  %26 = tail call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %22, i64 %25)
  %27 = extractvalue { i64, i1 } %26, 1
  br i1 %27, label %slow22, label %fast21

fail20:                                           ; preds = %ok4
  tail call void @mist_rt_fail(ptr nonnull %0, i32 8)
  br label %common.ret

fast21:                                           ; preds = %ok19
  %28 = extractvalue { i64, i1 } %26, 0
  br label %join32

slow22:                                           ; preds = %ok19
  store i64 3, ptr %vals23, align 16
  %29 = getelementptr inbounds i8, ptr %vals23, i64 8
  store i64 %22, ptr %29, align 8
  %30 = getelementptr inbounds i8, ptr %vals23, i64 16
  store i64 3, ptr %30, align 16
  %31 = getelementptr inbounds i8, ptr %vals23, i64 24
  store i64 %25, ptr %31, align 8
  %32 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %32, align 4
  %33 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %vals23, ptr nonnull %vals24)
  br i1 %33, label %ok25, label %fail26

ok25:                                             ; preds = %slow22
  %tag27 = load i64, ptr %vals24, align 16
  %34 = getelementptr inbounds i8, ptr %vals24, i64 8
  %pay28 = load i64, ptr %34, align 8
  %35 = icmp eq i64 %tag27, 3
  br i1 %35, label %join32, label %badtype30

fail26:                                           ; preds = %slow22
  call void @mist_rt_fail(ptr nonnull %0, i32 9)
  br label %common.ret

badtype30:                                        ; preds = %ok25
  store i64 %tag27, ptr %vals31, align 16
  %36 = getelementptr inbounds i8, ptr %vals31, i64 8
  store i64 %pay28, ptr %36, align 8
  %37 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31, i32 10)
  call void @mist_rt_fail(ptr nonnull %0, i32 11)
  br label %common.ret

join32:                                           ; preds = %ok25, %fast21
  %38 = phi i64 [ %28, %fast21 ], [ %pay28, %ok25 ]
  %39 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %38, 1
  br label %common.ret
}

declare i1 @mist_rt_prim(ptr, i32, i32, ptr, ptr) local_unnamed_addr

declare void @mist_rt_fail(ptr, i32) local_unnamed_addr

declare i1 @mist_rt_bad_value(ptr, ptr, i32) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn
declare ptr @llvm.stacksave.p0() #0

declare i1 @mist_rt_call_check(ptr) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare { i64, i1 } @llvm.sadd.with.overflow.i64(i64, i64) #1

define noundef i1 @m0.entry(ptr %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr {
entry:
  %vm = load ptr, ptr %0, align 8
  %4 = getelementptr i8, ptr %1, i64 8
  %pay = load i64, ptr %4, align 4
  %5 = getelementptr i8, ptr %vm, i64 264
  %depth = load i32, ptr %5, align 4
  %6 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %depth, i64 %pay)
  store i32 %depth, ptr %5, align 4
  %7 = extractvalue { i1, i64 } %6, 0
  br i1 %7, label %ok, label %common.ret

common.ret:                                       ; preds = %entry, %ok
  ret i1 %7

ok:                                               ; preds = %entry
  %8 = extractvalue { i1, i64 } %6, 1
  store i64 3, ptr %3, align 4
  %9 = getelementptr i8, ptr %3, i64 8
  store i64 %8, ptr %9, align 4
  br label %common.ret
}

attributes #0 = { mustprogress nocallback nofree nosync nounwind willreturn }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
